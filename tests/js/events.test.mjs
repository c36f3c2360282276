// world.events({signal}): every topic as an async iterator, buffered, ended by break, return()
// or the signal (which also unsubscribes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');
let n = 0;
const name = (base) => `${base} ${process.pid} ${++n}`;

async function world() {
  const w = await AgentWorld.create({ name: name('Events') });
  w.registerProvider({ async *stream() { yield 'one'; yield ' two'; } });
  await w.addAgent({ name: 'Echo', provider: 'custom', model: 'm' });
  return w;
}

test('for await sees every topic in order until the signal ends it', async () => {
  const w = await world();
  const stop = new AbortController();
  const seen = [];
  const reading = (async () => {
    for await (const { topic, event } of w.events({ signal: stop.signal })) {
      seen.push(`${topic}:${event.type ?? event.kind}`);
      if (topic === 'world' && event.type === 'idle') stop.abort();
    }
  })();
  await w.send('What should we build?');
  await reading;
  assert.deepEqual(seen, [
    'message:message', 'system:chat-saved', 'system:chat-title-updated',
    'sse:start', 'sse:chunk', 'sse:chunk', 'sse:end',
    'message:message', 'system:chat-saved', 'world:idle',
  ]);
});

test('events are buffered until read, and break unsubscribes', async () => {
  const w = await world();
  const it = w.events();
  await w.send('What should we build?');
  await w.idle();
  const first = [];
  for await (const { topic } of it) {
    first.push(topic);
    if (first.length === 3) break;
  }
  assert.deepEqual(first, ['message', 'system', 'system']); // message, chat-saved, title
  // After break: done, and later events are not buffered any more.
  assert.deepEqual(await it.next(), { value: undefined, done: true });
});

test('an aborted signal gives an empty iteration; a wrong one is an error', async () => {
  const w = await world();
  const it = w.events({ signal: AbortSignal.abort() });
  assert.deepEqual(await it.next(), { value: undefined, done: true });
  assert.throws(() => w.events({ signal: 'soon' }), (e) => e.code === 'invalid_input');
  const it2 = w.events();
  assert.deepEqual(await it2.return(), { value: undefined, done: true });
  assert.deepEqual(await it2.next(), { value: undefined, done: true });
});

test("send({signal}) cancels only the agent work that message started", async () => {
  const w = await AgentWorld.create({ name: name('Signal') });
  w.registerProvider({
    async *stream({ model }, { signal }) {
      if (model === 'quick') { yield 'quick answer'; return; }
      yield 'thinking';
      while (!signal.aborted) await new Promise((r) => setTimeout(r, 10));
    },
  });
  await w.addAgent({ name: 'Slow', provider: 'custom', model: 'slow' });
  await w.addAgent({ name: 'Quick', provider: 'custom', model: 'quick' });
  const sse = [];
  w.on('sse', (e) => sse.push(e));
  const published = [];
  w.on('message', (m) => published.push([m.sender, m.content]));
  const stop = new AbortController();
  await w.send('@slow take your time', { signal: stop.signal });
  await w.send('@quick a quick one');
  while (!sse.some((e) => e.agentName === 'slow' && e.type === 'chunk')) {
    await new Promise((r) => setTimeout(r, 5));
  }
  stop.abort();
  await w.idle();
  const slowError = sse.find((e) => e.agentName === 'slow' && e.type === 'error');
  assert.match(slowError.error, /cancelled/);
  assert.equal(slowError.partialContent, 'thinking');
  assert.deepEqual(published.filter(([s]) => s === 'quick'), [['quick', 'quick answer']],
    'the other message is still answered');
  await assert.rejects(w.send('never sent', { signal: AbortSignal.abort() }),
    (e) => e.code === 'llm_aborted');
  assert.ok(!published.some(([, c]) => c === 'never sent'));
  await assert.rejects(w.send('x', { signal: 'no' }), (e) => e.code === 'invalid_input');
});

test('chunk and reasoning events are plain objects of exactly their fields, one per listener', async () => {
  const w = await AgentWorld.create({ name: name('Pieces') });
  // Every character JSON escapes, and some it does not.
  // A byte-order mark first (kept), and plain ASCII of 32 and 33 bytes (the snippet that
  // builds the objects reads up to 32 itself, longer through TextDecoder).
  const pieces = ['a"b\\c\n\r\t', '\u0001\u001f\u007f', 'é 🌍 \u2028 </script>', '\ufeffBOM first',
    'x'.repeat(32), 'y'.repeat(33)];
  w.registerProvider({
    async *stream() {
      yield { reasoning: 'think "hard"\n' };
      for (const p of pieces) yield p;
    },
  });
  const agent = await w.addAgent({ name: 'Piecer', provider: 'custom', model: 'm' });
  const first = [];
  const second = [];
  w.on('sse', (e) => {
    if (e.type === 'chunk' || e.type === 'reasoning') {
      first.push(e);
      e.content = 'changed by the first listener';
    }
  });
  w.on('sse', (e) => { if (e.type === 'chunk' || e.type === 'reasoning') second.push(e); });
  const thisValues = new Set();
  w.on('sse', function listener() { thisValues.add(this); });
  await w.send('go');
  await w.idle();
  const messageId = second[0].messageId;
  assert.equal(typeof messageId, 'string');
  const want = [
    { type: 'reasoning', agentName: agent.id, messageId, content: 'think "hard"\n' },
    ...pieces.map((content) => ({ type: 'chunk', agentName: agent.id, messageId, content })),
  ];
  assert.deepEqual(second, want);
  for (const e of second) {
    assert.deepEqual(Object.keys(e), ['type', 'agentName', 'messageId', 'content']);
    assert.equal(Object.getPrototypeOf(e), Object.prototype);
  }
  // A listener is called with `this` null, as for every other event (strict-mode code sees it).
  assert.deepEqual([...thisValues], [null]);
  // Each listener got its own object: the first one's change did not reach the second.
  assert.equal(first.length, want.length);
  assert.ok(first.every((e, i) => e !== second[i]));
  // The next reply's pieces carry the next reply's id (and a second agent's, its own name).
  const other = await w.addAgent({ name: 'Other', provider: 'custom', model: 'm' });
  second.length = 0;
  await w.send('again');
  await w.idle();
  const replies = new Map();
  for (const e of second) replies.set(e.messageId, [...(replies.get(e.messageId) ?? []), e]);
  assert.equal(replies.size, 2);
  assert.ok(!replies.has(messageId));
  const names = [...replies.values()].map((list) => {
    assert.ok(list.every((e) => e.agentName === list[0].agentName));
    assert.deepEqual(list.map((e) => e.content), ['think "hard"\n', ...pieces]);
    return list[0].agentName;
  });
  assert.deepEqual(names.sort(), [agent.id, other.id].sort());
  w.free();
});

test("whatever an on() callback returns, every chunk is delivered and only a rejection is reported", async () => {
  const w = await world();
  const errors = [];
  w.on('system', (e) => { if (e.type === 'error') errors.push(e.message); });
  // Nothing, null, a number, a string, a function, a plain object, a thenable that rejects.
  const returns = [undefined, null, 7, 'text', () => {}, { then: 1 }, { then: (_, no) => no(new Error('thenable no')) }];
  const seen = returns.map(() => []);
  returns.forEach((r, i) => w.on('sse', (e) => {
    if (e.type !== 'chunk') return undefined;
    seen[i].push(e.content);
    return r;
  }));
  await w.send('go');
  await w.idle();
  await new Promise((r) => setTimeout(r, 20));
  for (const s of seen) assert.deepEqual(s, ['one', ' two']);
  assert.deepEqual(errors, [
    "a 'sse' event callback failed: thenable no",
    "a 'sse' event callback failed: thenable no",
  ]);
});

test('chunk contents arrive exact while the engine memory grows in the middle of a reply', async () => {
  const w = await AgentWorld.create({ name: name('Growth') });
  // Short ASCII, non-ASCII, then pieces large enough to grow the WebAssembly memory, then short
  // ones again (read through a view of the memory made before it grew).
  const pieces = [];
  for (let i = 0; i < 200; i++) pieces.push(i % 3 ? ` t${i}` : ` é${i}`);
  for (let i = 0; i < 4; i++) pieces.push(String.fromCharCode(97 + i).repeat(4 << 20));
  for (let i = 0; i < 200; i++) pieces.push(` u${i}`);
  w.registerProvider({ async *stream() { for (const p of pieces) yield p; } });
  await w.addAgent({ name: 'Grower', provider: 'custom', model: 'm' });
  const seen = [];
  let reply = '';
  w.on('sse', (e) => { if (e.type === 'chunk') seen.push(e.content); });
  w.on('message', (m) => { if (m.sender === 'grower') reply = m.content; });
  await w.send('go');
  await w.idle();
  assert.equal(seen.length, pieces.length);
  assert.ok(seen.every((c, i) => c === pieces[i]), 'every chunk as streamed');
  assert.equal(reply, pieces.join(''));
  w.free();
});

test('message events and send() results are plain objects of the stored form, one per listener', async () => {
  const w = await AgentWorld.create({ name: name('Messages') });
  // Non-ASCII of every UTF-16 width (the fields are cut out of one decoded text by their
  // lengths in UTF-16 units), a byte-order mark first (kept), and what JSON escapes.
  const human = 'é 🌍 \u2028 "quoted"\n\\ 日本';
  const replies = ['\ufeffBOM 🌍🌍 first', 'plain ASCII reply', '<world>pass</world>'];
  let call = 0;
  w.registerProvider({ async *stream() { yield replies[call++ % replies.length]; } });
  const agent = await w.addAgent({ name: 'Zoë Ünïcode', provider: 'custom', model: 'm' });
  const first = [];
  const second = [];
  const thisValues = new Set();
  w.on('message', function listener(m) {
    thisValues.add(this);
    first.push(m);
    m.content = 'changed by the first listener';
  });
  w.on('message', (m) => { second.push(m); });
  const sent = [];
  for (let i = 0; i < 3; i++) {
    sent.push(await w.send(human));
    await w.idle();
  }
  const stored = await w.messages(w.currentChat().id);
  // Every message published (3 human, 2 replies, the pass notice) came out as the stored form:
  // same keys in the same order, same values, and `kind` for the notice.
  assert.equal(second.length, stored.length);
  assert.deepEqual(second, stored);
  for (const [i, m] of second.entries()) {
    assert.deepEqual(Object.keys(m), Object.keys(stored[i]));
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
  }
  assert.deepEqual(second.map((m) => m.sender), ['HUMAN', agent.id, 'HUMAN', agent.id, 'HUMAN', 'system']);
  assert.deepEqual(second.map((m) => m.kind), ['message', 'message', 'message', 'message', 'message', 'pass']);
  assert.equal(second[1].content, replies[0]);
  assert.equal(second[1].replyToMessageId, second[0].messageId);
  assert.ok(!('replyToMessageId' in second[0]));
  // send() resolves with the same form, as its own object.
  assert.deepEqual(sent, [second[0], second[2], second[4]]);
  assert.ok(sent.every((m) => !second.includes(m)));
  // `this` is null; the first listener's change did not reach the second listener's object.
  assert.deepEqual([...thisValues], [null]);
  assert.ok(first.every((m, i) => m !== second[i]));
  assert.ok(second.every((m) => m.content !== 'changed by the first listener'));
  // Session mode off: nothing is stored, and `chatId` is null (present, not left out).
  await w.setSessionMode(false);
  second.length = 0;
  const off = await w.send('off the record ✓');
  await w.idle();
  assert.equal(second[0].chatId, null);
  assert.deepEqual(Object.keys(second[0]), ['messageId', 'chatId', 'sender', 'content', 'createdAt', 'kind']);
  assert.deepEqual(off, second[0]);
  assert.equal(second[0].content, 'off the record ✓');
  assert.equal(second[1].content, replies[0]);
  assert.equal(second[1].chatId, null);
  w.free();
});
