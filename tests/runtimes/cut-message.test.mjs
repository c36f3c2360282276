// Known engine bug (src/web/llm_fetch.rs, the `Err(FetchError::Network(_))` arm after the race):
// a connection that breaks mid-body, after a 200 and streamed output, is reported with
// `network_error()`, whose text says "could not reach <baseUrl>: the request failed before any
// response" plus CORS advice, which is false and misleading there. Marked `todo` until the
// Rust side reports a mid-stream break as such (e.g. "the connection closed mid-reply").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startMockLlm } from '../mock-llm/server.mjs';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');

test('a connection cut after output is not described as "failed before any response"', {
  todo: 'Rust bug: a mid-stream network failure reuses the before-any-response message',
}, async () => {
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
  } finally {
    await mock.close();
  }
});
