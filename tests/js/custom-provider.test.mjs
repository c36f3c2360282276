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

test('the request carries every control character, at any position, and long plain runs', async () => {
  // The request's strings are escaped eight bytes at a time: escapes at each offset of a
  // word, next to each other, next to multi-byte characters, and runs longer than a word.
  const world = await AgentWorld.create({ name: name('Custom Escapes') });
  const requests = [];
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      yield 'ok';
    },
  });
  await world.addAgent({ name: 'Local', provider: 'custom', model: 'm "quoted" \\ model' });
  const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
  const texts = [
    `${controls}\u007f"\\/`,
    ...Array.from({ length: 9 }, (_, i) => `${'a'.repeat(i)}"${'é'.repeat(i)}\\\n${'b'.repeat(17 - i)}\u0000`),
    `${'plain ASCII run, long enough to span many words '.repeat(20)}end`,
    'ü東😀"\u001f\u0008\u000c',
  ];
  for (const text of texts) {
    await world.send(text);
    await world.idle();
  }
  assert.equal(requests.length, texts.length);
  requests.forEach((r, k) => {
    assert.equal(r.model, 'm "quoted" \\ model');
    // The input window: the latest human messages, each exactly as sent.
    const user = r.messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.ok(user.length >= 2 || k === 0);
    assert.deepEqual(user, texts.slice(0, k + 1).slice(-user.length));
  });
});

test('the engine asks for one piece ahead, never more, and an early next() that throws fails the call', async () => {
  // Read-ahead of one: once a piece is handed over, the next `next()` is called before the
  // piece's chunk event (so a provider that answers at once wakes the engine once per reply).
  const world = await AgentWorld.create({ name: name('Custom Ahead') });
  const log = [];
  let pieces = ['a', 'b', 'c'];
  let throwAt = -1;
  world.registerProvider({
    stream() {
      let i = 0;
      return {
        [Symbol.asyncIterator]() { return this; },
        next() {
          const k = i++;
          log.push(`next${k}`);
          if (k === throwAt) throw new Error('next() broke');
          return Promise.resolve(k < pieces.length ? { done: false, value: pieces[k] } : { done: true });
        },
      };
    },
  });
  await world.addAgent({ name: 'Ahead', provider: 'custom', model: 'm' });
  const replies = [];
  world.on('sse', (e) => e.type === 'chunk' && log.push(`chunk:${e.content}`));
  world.on('message', (m) => m.sender === 'ahead' && replies.push(m.content));
  const errors = [];
  world.on('system', (e) => e.type === 'error' && errors.push(e));
  await world.send('go');
  await world.idle();
  assert.deepEqual(replies, ['abc']);
  assert.deepEqual(log, ['next0', 'next1', 'chunk:a', 'next2', 'chunk:b', 'next3', 'chunk:c']);
  // The step asked for ahead throws: the call fails with its message, the text before it kept.
  log.length = 0;
  pieces = ['partial'];
  throwAt = 1;
  await world.send('again');
  await world.idle();
  assert.deepEqual(log, ['next0', 'next1', 'chunk:partial']);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'llm_error');
  assert.match(errors[0].message, /next\(\) broke/);
  assert.deepEqual(replies, ['abc', 'partial']);
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

test('options.signal is the same aborting signal however late it is read', async () => {
  // The engine makes the signal when first read (most providers never read it): it must look
  // and behave as an eager one, read at once, after a cancellation, or after the call.
  const world = await AgentWorld.create({ name: name('Custom Late Signal') });
  const seen = [];
  let release;
  world.registerProvider({
    stream(_request, options) {
      const call = { options, keys: Object.keys(options) };
      seen.push(call);
      let i = 0;
      return {
        [Symbol.asyncIterator]() { return this; },
        next: () => {
          if (i++ === 0) return Promise.resolve({ done: false, value: 'piece ' });
          // The first call waits until stopped; the later one finishes at once.
          return seen.length === 1 ? new Promise((r) => { release = r; }) : Promise.resolve({ done: true });
        },
        return: async () => {
          call.inReturn = options.signal;
          return { done: true };
        },
      };
    },
  });
  await world.addAgent({ name: 'Late', provider: 'custom', model: 'm' });
  const sse = [];
  world.on('sse', (e) => sse.push(e));
  await world.send('go');
  while (!release) await new Promise((r) => setTimeout(r, 5));
  world.stop();
  await world.idle();
  release({ done: true });
  const [stopped] = seen;
  assert.deepEqual(stopped.keys, ['signal']);
  // Read for the first time in return(), after the cancellation: already aborted.
  assert.ok(stopped.inReturn instanceof AbortSignal);
  assert.equal(stopped.inReturn.aborted, true);
  assert.equal(stopped.options.signal, stopped.inReturn);
  assert.ok(sse.some((e) => e.type === 'error' && /cancelled/.test(e.error)));
  // A call that finishes: its signal, read only afterwards, never aborts and stays the same.
  await world.send('again');
  await world.idle();
  const done = seen[1];
  const late = done.options.signal;
  assert.ok(late instanceof AbortSignal);
  assert.equal(late.aborted, false);
  assert.equal(done.options.signal, late);
  world.stop();
  assert.equal(late.aborted, false);
  assert.deepEqual(Object.keys(done.options), ['signal']);
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
  assert.match(system.at(-1).message, /provider 'custom' is not configured: missing a registered custom provider/);
});

test('what stream() returns or throws before any step fails the call with a message that says so', async () => {
  const world = await AgentWorld.create({ name: name('Custom Shapes') });
  await world.addAgent({ name: 'Shaped', provider: 'custom', model: 'm' });
  const system = [];
  world.on('system', (e) => e.type === 'error' && system.push(e));
  const cases = [
    [{ stream() { return 42; } }, /stream\(\) must return an async iterable/],
    [{ stream() { return {}; } }, /stream\(\) must return an async iterable/],
    [{ stream() { return { [Symbol.asyncIterator]() { return {}; } }; } }, /the iterator has no next\(\) method/],
    [{ stream() { throw new Error('no model loaded'); } }, /no model loaded/],
    [{ stream() { return { [Symbol.asyncIterator]() { throw new Error('cannot iterate'); } }; } }, /cannot iterate/],
    // A thrown object that is not an Error: the generic message.
    [{ stream() { throw { awwCustomShapeLike: 1 }; } }, /the custom provider failed/],
    // An object with next() is its own iterator.
    [{ stream() { let n = 0; return { next: async () => (n++ ? { done: true } : { done: false, value: 'ok' }) }; } }, null],
  ];
  for (const [provider, expected] of cases) {
    world.registerProvider(provider);
    const before = system.length;
    await world.send('hello');
    await world.idle();
    if (expected === null) {
      assert.equal(system.length, before, JSON.stringify(system.slice(before)));
    } else {
      assert.equal(system.length, before + 1);
      assert.equal(system.at(-1).code, 'llm_error');
      assert.match(system.at(-1).message, expected);
    }
  }
});

test('a chunk is a string, an object of pieces, or nothing; anything else fails the call', async () => {
  const world = await AgentWorld.create({ name: name('Custom Chunks') });
  await world.addAgent({ name: 'Chunky', provider: 'custom', model: 'm' });
  const system = [];
  world.on('system', (e) => e.type === 'error' && system.push(e));
  world.registerProvider({ async *stream() { yield undefined; yield null; yield { text: 'a' }; yield 'b'; yield {}; } });
  await world.send('hello');
  await world.idle();
  assert.deepEqual(system, []);
  const messages = await world.messages(world.currentChat().id);
  assert.equal(messages.at(-1).content, 'ab');
  world.registerProvider({ async *stream() { yield 'partial '; yield 42; } });
  await world.send('again');
  await world.idle();
  assert.equal(system.length, 1);
  assert.equal(system[0].code, 'llm_error');
  assert.match(system[0].message, /each chunk must be a string or \{ text\?, reasoning\?, toolCalls\? \}/);
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

test('between calls nothing keeps Node running, and during one its timeouts do', async () => {
  // The timeouts' shared timer is kept between calls (unref'd) rather than cleared. The
  // process must exit as soon as the last reply is done, not when that timer would fire (a
  // 60 s stall timeout here); and a call that hangs on nothing that keeps Node alive must
  // still end with its stall timeout (the kept timer is ref'd again for it).
  const { spawnSync } = await import('node:child_process');
  const script = `
    const { AgentWorld } = require(${JSON.stringify(require.resolve('../../pkg/nodejs/agent_world_wasm.js'))});
    (async () => {
      const world = await AgentWorld.create({ name: 'Exit ' + process.pid });
      let hang = false;
      world.registerProvider({
        async *stream() {
          // A wait that does not keep Node alive by itself.
          if (hang) await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
          yield 'ok';
        },
      });
      await world.addAgent({ name: 'A', provider: 'custom', model: 'm' });
      const codes = [];
      world.on('system', (e) => { if (e.code) codes.push(e.code); });
      world.setTimeouts(120_000, 300);
      for (let i = 0; i < 3; i++) { await world.send('hello ' + i); await world.idle(); }
      hang = true;
      world.setTimeouts(120_000, 500);
      await world.send('hang');
      await world.idle();
      hang = false;
      world.setTimeouts(120_000, 60_000);
      await world.send('last');
      await world.idle();
      console.log(JSON.stringify({ codes }));
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.error, undefined, `the process did not exit by itself: ${r.error}`);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim()), { codes: ['llm_stalled'] });
});

test('a window of several messages reaches the provider exact, keys in order', async () => {
  // The messages' contents are cut out of one decoded text by their lengths in UTF-16 units:
  // every width of character, a leading byte-order mark (kept), and what JSON escapes.
  const world = await AgentWorld.create({ name: name('Custom Window') });
  const requests = [];
  const replies = ['東京 "ok"\n!', '\ufeff😀 back', 'plain'];
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      yield replies[requests.length - 1];
    },
  });
  await world.addAgent({ name: 'Local', provider: 'custom', model: 'm', systemPrompt: '\ufeff🌍 brief\\' });
  const sent = ['é', '😀😀 \u2028', 'last one'];
  for (const text of sent) {
    await world.send(text);
    await world.idle();
  }
  assert.equal(requests.length, 3);
  assert.deepEqual(requests[2].messages, [
    { role: 'system', content: '\ufeff🌍 brief\\' },
    { role: 'user', content: sent[0] },
    { role: 'assistant', content: replies[0] },
    { role: 'user', content: sent[1] },
    { role: 'assistant', content: replies[1] },
    { role: 'user', content: sent[2] },
  ]);
  assert.deepEqual(Object.keys(requests[2]), ['messages', 'model', 'tools', 'agentName', 'purpose']);
  for (const m of requests[2].messages) assert.deepEqual(Object.keys(m), ['role', 'content']);
  assert.ok(Array.isArray(requests[2].messages));
  // Each call has its own request.
  assert.notEqual(requests[1].messages, requests[2].messages);
  assert.equal(requests[1].messages.length, 4);
});

test('every field of a request arrives as written: non-ASCII model and agent, temperature, maxTokens, titles, and the same keys with tools or reasoning', async () => {
  const world = await AgentWorld.create({ name: name('Custom Fields'), chatLLMProvider: 'custom', chatLLMModel: 'tïtle 東京 😀' });
  const requests = [];
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      yield request.purpose === 'title' ? 'A Title' : 'ok';
    },
  });
  await world.addAgent({ name: 'Ünïcode Agent', provider: 'custom', model: 'mödel "東京" 😀\\', temperature: 0,
    maxTokens: 12, systemPrompt: 'é' });
  await world.send('hello 😀');
  await world.idle();
  const reply = requests.find((r) => r.purpose === 'reply');
  assert.deepEqual(reply, {
    messages: [{ role: 'system', content: 'é' }, { role: 'user', content: 'hello 😀' }],
    model: 'mödel "東京" 😀\\',
    temperature: 0,
    maxTokens: 12,
    tools: [],
    agentName: 'ünïcode-agent',
    purpose: 'reply',
  });
  assert.deepEqual(Object.keys(reply), ['messages', 'model', 'temperature', 'maxTokens', 'tools', 'agentName', 'purpose']);
  const title = requests.find((r) => r.purpose === 'title');
  assert.ok(title, 'a title call was made');
  assert.deepEqual(Object.keys(title), ['messages', 'model', 'temperature', 'maxTokens', 'tools', 'purpose']);
  assert.equal(title.model, 'tïtle 東京 😀');
  assert.equal(typeof title.temperature, 'number');
  assert.ok(Number.isInteger(title.maxTokens) && title.maxTokens > 0);
  assert.deepEqual(title.tools, []);
  assert.equal(title.messages.length, 1);
  assert.equal(title.messages[0].role, 'user');
  assert.match(title.messages[0].content, /hello 😀/);
  assert.equal((await world.listChats())[0].name, 'A Title');

  // An agent with a reasoning setting: the same request, with `reasoning` in its place.
  await world.updateAgent('ünïcode-agent', { reasoning: { effort: 'low' } });
  await world.send('again');
  await world.idle();
  const withReasoning = requests.filter((r) => r.purpose === 'reply').at(-1);
  assert.deepEqual(Object.keys(withReasoning), ['messages', 'model', 'temperature', 'maxTokens', 'tools', 'reasoning', 'agentName', 'purpose']);
  assert.equal(withReasoning.model, reply.model);
  assert.equal(withReasoning.temperature, 0);
  assert.deepEqual(withReasoning.reasoning, { effort: 'low' });
});

test("the engine wakes without Node's queueMicrotask, and listeners and providers keep the caller's async context", async () => {
  // Node wraps each queueMicrotask callback in an async resource, the host's largest cost per
  // wake of the engine's task queue; the build has the queue wake through a promise reaction
  // (scripts/glue-step.mjs). The async context seen by callbacks is the same either way.
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const als = new AsyncLocalStorage();
  const world = await AgentWorld.create({ name: name('Custom Wakes') });
  const seen = [];
  world.registerProvider({
    async *stream() {
      seen.push(`provider:${als.getStore()}`);
      yield 'ok';
    },
  });
  await world.addAgent({ name: 'A', provider: 'custom', model: 'm' });
  await world.addAgent({ name: 'B', provider: 'custom', model: 'm' });
  world.on('message', (m) => seen.push(`${m.sender}:${als.getStore()}`));
  const original = globalThis.queueMicrotask;
  let queued = 0;
  globalThis.queueMicrotask = (callback) => {
    queued++;
    original(callback);
  };
  const order = [];
  try {
    await als.run('caller', async () => {
      const sent = world.send('hello');
      Promise.resolve().then(() => order.push('caller microtask'));
      await sent;
      order.push('sent');
      await world.idle();
    });
  } finally {
    globalThis.queueMicrotask = original;
  }
  assert.equal(queued, 0);
  assert.deepEqual(order, ['caller microtask', 'sent']);
  assert.deepEqual(seen.sort(), ['HUMAN:caller', 'a:caller', 'b:caller', 'provider:caller', 'provider:caller']);
});
