// A connection that breaks mid-body, after a 200 and streamed output, must say so: the
// before-any-response message (with its CORS advice) would mislead. A regression test for a
// bug this matrix found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startMockLlm } from '../mock-llm/server.mjs';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');

test('a connection cut after output is not described as "failed before any response"', async () => {
  const mock = await startMockLlm({ port: 0, delayMs: 0 });
  try {
    const world = await AgentWorld.create({ name: `Cut Message ${process.pid} ${Date.now()}` });
    world.configureProvider('openai', { apiKey: 'k', baseUrl: `${mock.url}/v1` });
    await world.addAgent({ name: 'A', provider: 'openai', model: 'm',
      systemPrompt: 'mock-reply: one two three four five six seven eight nine ten\nmock-delay: 20\nmock-fault: cut:1000' });
    const errors = [];
    const off = world.on('system', (e) => e.type === 'error' && errors.push(e));
    await world.send('hello');
    await world.idle();
    off();
    assert.equal(errors.length, 1);
    assert.doesNotMatch(errors[0].message, /before any response/);
    assert.match(errors[0].message, /closed in the middle of the reply/);
  } finally {
    await mock.close();
  }
});
