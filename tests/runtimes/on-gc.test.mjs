// A subscription lives as long as its world, not as long as the unsubscribe function
// `world.on()` returns: callers often ignore that function (the README's quick start does), and
// a GC must not silently stop the callback. A regression test for a bug the matrix found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startMockLlm } from '../mock-llm/server.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');

test('a callback whose unsubscribe function is dropped keeps receiving events', async () => {
  const mock = await startMockLlm({ port: 0, delayMs: 0 });
  try {
    const world = await AgentWorld.create({ name: `On GC ${process.pid} ${Date.now()}` });
    world.configureProvider('openai', { apiKey: 'k', baseUrl: `${mock.url}/v1` });
    await world.addAgent({ name: 'A', provider: 'openai', model: 'm', systemPrompt: 'mock-reply: hi there' });
    const got = [];
    world.on('message', (m) => got.push(m.content)); // the unsubscribe function is not kept
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    await world.send('hello');
    await world.idle();
    assert.deepEqual(got, ['hello', 'hi there']);
  } finally {
    await mock.close();
  }
});
