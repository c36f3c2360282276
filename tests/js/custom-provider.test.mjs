// A custom provider written in JavaScript (how in-page models plug in), through the engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');
let n = 0;
const name = (base) => `${base} ${process.pid} ${++n}`;

test('a JS provider streams text and reasoning into the engine and sees the built input', async () => {
  const world = await AgentWorld.create({ name: name('Custom') });
  const requests = [];
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      yield { reasoning: 'thinking…' };
      for (const piece of ['Hello', ' from', ' JavaScript']) yield piece;
    },
  });
  await world.addAgent({ name: 'Local', provider: 'custom', model: 'in-page-model',
    systemPrompt: 'Be brief.', temperature: 0.3 });
  const sse = [];
  world.on('sse', (e) => sse.push(e));
  const replies = [];
  world.on('message', (m) => m.sender === 'local' && replies.push(m.content));
  await world.send('hi there');
  await world.idle();
  assert.deepEqual(replies, ['Hello from JavaScript']);
  assert.deepEqual(sse.map((e) => e.type), ['start', 'reasoning', 'chunk', 'chunk', 'chunk', 'end']);
  assert.deepEqual(requests[0].messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'hi there' },
  ]);
  assert.equal(requests[0].model, 'in-page-model');
  assert.equal(requests[0].temperature, 0.3);
  // The whole request, nothing more (optional fields the agent does not set are absent).
  assert.deepEqual(requests[0], {
    messages: requests[0].messages,
    model: 'in-page-model',
    temperature: 0.3,
    tools: [],
    agentName: 'local',
    purpose: 'reply',
  });
});

test('the request carries any text exactly (quotes, backslashes, controls, non-ASCII)', async () => {
  const world = await AgentWorld.create({ name: name('Custom Text') });
  const requests = [];
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      yield 'ok';
    },
  });
  await world.addAgent({ name: 'Local', provider: 'custom', model: 'm', maxTokens: 64,
    systemPrompt: 'Say "hi" \\ then\tstop\u0001.' });
  const text = 'line "one"\nline \\two\\ \u0007 über 東京 😀 </script>';
  await world.send(text);
  await world.idle();
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0].messages, [
    { role: 'system', content: 'Say "hi" \\ then\tstop\u0001.' },
    { role: 'user', content: text },
  ]);
  assert.equal(requests[0].maxTokens, 64);
  assert.equal('temperature' in requests[0], false);
});

test('stop() aborts the provider signal and calls the iterator return()', async () => {
  const world = await AgentWorld.create({ name: name('Custom Stop') });
  let signal;
  let returned = false;
  world.registerProvider({
    stream(_request, options) {
      signal = options.signal;
      let i = 0;
      return {
        [Symbol.asyncIterator]() { return this; },
        next: () => new Promise((resolve) => setTimeout(() => resolve({ done: false, value: `piece${i++} ` }), 20)),
        return: async () => { returned = true; return { done: true }; },
      };
    },
  });
  await world.addAgent({ name: 'Slow', provider: 'custom', model: 'm' });
  const sse = [];
  world.on('sse', (e) => sse.push(e));
  await world.send('go');
  while (!sse.some((e) => e.type === 'chunk')) await new Promise((r) => setTimeout(r, 5));
  world.stop();
  await world.idle();
  assert.equal(signal.aborted, true);
  assert.equal(returned, true);
  const err = sse.find((e) => e.type === 'error');
  assert.match(err.error, /cancelled/);
  assert.ok(err.partialContent.startsWith('piece0'));
});

test('a provider that throws fails the call with its message; a wrong object fails at once', async () => {
  const world = await AgentWorld.create({ name: name('Custom Throw') });
  world.registerProvider({ async *stream() { yield 'partial'; throw new Error('model crashed'); } });
  await world.addAgent({ name: 'Fragile', provider: 'custom', model: 'm' });
  const system = [];
  world.on('system', (e) => e.type === 'error' && system.push(e));
  await world.send('hello');
  await world.idle();
  assert.equal(system[0].code, 'llm_error');
  assert.match(system[0].message, /model crashed/);
  assert.throws(() => world.registerProvider({ complete() {} }), (e) => e.code === 'invalid_input'
    && /stream/.test(e.message));
  // Without a registered provider, a custom agent's call says what is missing.
  world.registerProvider(null);
  await world.send('again');
  await world.idle();
  assert.equal(system.at(-1).code, 'provider_not_configured');
});

test('a custom provider that fails before any output is not retried', async () => {
  const world = await AgentWorld.create({ name: name('Custom No Retry') });
  let calls = 0;
  // Fails the way a network error would, before the first token: an HTTP provider would retry.
  world.registerProvider({ async *stream() { calls++; throw new TypeError('Failed to fetch'); } });
  await world.addAgent({ name: 'Once', provider: 'custom', model: 'm' });
  const errors = [];
  world.on('system', (e) => e.type === 'error' && errors.push(e));
  await world.send('hello');
  await world.idle();
  assert.equal(calls, 1, 'the engine does not retry custom providers');
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /Failed to fetch/);
});
