// The JS boundary holds whatever a caller passes or does (issue 12): hostile input is refused
// with `invalid_input` naming the field and leaves the module working; `free()` works at any
// time and closes the world; an async callback's rejection is reported, never unhandled; a
// store adapter that never answers times out (a trap: trap.test.mjs). Runs the npm package's Node
// entry (pkg/npm, with its JS guard layer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const entry = fileURLToPath(new URL('../../pkg/npm/node/index.cjs', import.meta.url));
if (!existsSync(entry)) throw new Error('pkg/npm is missing: run bash scripts/package.sh first');
const { AgentWorld, isAgentWorldError, version } = require(entry);

let n = 0;
const unique = (base) => `${base} ${process.pid} ${++n}`;

/** The AgentWorldError a call throws or rejects with (fails when it succeeds). */
async function failure(call) {
  try {
    await call();
  } catch (e) {
    assert.ok(isAgentWorldError(e), `not an AgentWorldError: ${e?.stack ?? e}`);
    return e;
  }
  assert.fail('the call succeeded');
}

async function answers(world, text = 'ok') {
  world.registerProvider({ async *stream() { yield text; } });
  if (!world.agents().some((a) => a.id === 'probe')) {
    await world.addAgent({ name: 'Probe', provider: 'custom', model: 'm' });
  }
  const replies = [];
  const off = world.on('message', (m) => m.sender === 'probe' && replies.push(m.content));
  await world.send('@probe are you there?');
  await world.idle();
  off();
  assert.deepEqual(replies, [text]);
}

function cyclic() {
  const o = { name: 'x' };
  o.self = o;
  return o;
}

function deep(levels) {
  let o = { leaf: true };
  for (let i = 0; i < levels; i++) o = { inner: o };
  return o;
}

test('cyclic and 10,000-deep input is refused with invalid_input naming the field; the module lives', async () => {
  const world = await AgentWorld.create({ name: unique('Cyclic'), storage: 'memory' });
  await answers(world);
  const calls = {
    'AgentWorld.create': (v) => AgentWorld.create({ name: unique('C'), storage: 'memory', extra: v }),
    addAgent: (v) => world.addAgent({ name: 'A', provider: 'custom', model: 'm', extra: v }),
    updateAgent: (v) => world.updateAgent('probe', { systemPrompt: 'x', extra: v }),
    update: (v) => world.update({ description: 'x', extra: v }),
    configureProvider: (v) => world.configureProvider('openai', { apiKey: 'k', headers: { x: v } }),
  };
  for (const [name, call] of Object.entries(calls)) {
    const c = await failure(() => call(cyclic()));
    assert.equal(c.code, 'invalid_input', `${name}: ${c.message}`);
    assert.match(c.message, /\.self is cyclic/, name);
    const d = await failure(() => call(deep(10_000)));
    assert.equal(d.code, 'invalid_input', `${name}: ${d.message}`);
    assert.match(d.message, /nested deeper than 64 levels/, name);
  }
  // The whole options object being cyclic, as the issue reported it.
  const whole = await failure(() => AgentWorld.create(Object.assign(cyclic(), { storage: 'memory' })));
  assert.match(whole.message, /AgentWorld\.create options\.self is cyclic/);
  // A shared (not cyclic) sub-object is fine; an exponential DAG is refused, not expanded.
  const shared = { v: 'x' };
  const agent = await world.addAgent({ name: 'Shared', provider: 'custom', model: 'm', type: 'a' });
  assert.equal(agent.id, 'shared');
  await world.configureProvider('openai', { apiKey: 'k', headers: { a: shared.v, b: shared.v } });
  let dag = { leaf: 1 };
  for (let i = 0; i < 40; i++) dag = { l: dag, r: dag };
  const big = await failure(() => world.update({ extra: dag }));
  assert.match(big.message, /too large/);
  assert.equal(typeof version(), 'string');
  await answers(world, 'still alive');
  await answers(await AgentWorld.create({ name: unique('Fresh'), storage: 'memory' }));
});

test('NaN, ±Infinity, BigInt, symbols and functions are refused, never read as null', async () => {
  const world = await AgentWorld.create({ name: unique('Nan'), storage: 'memory' });
  await world.addAgent({ name: 'Alice', provider: 'custom', model: 'm', systemPrompt: 'be kind',
    temperature: 0.5 });
  for (const [bad, shown] of [[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity']]) {
    const e = await failure(() => world.updateAgent('alice', { systemPrompt: bad }));
    assert.equal(e.code, 'invalid_input');
    assert.equal(e.message, `updateAgent patch.systemPrompt must be a finite number (got ${shown})`);
    const t = await failure(() => world.updateAgent('alice', { temperature: bad }));
    assert.match(t.message, /updateAgent patch\.temperature must be a finite number/);
  }
  for (const [bad, what] of [[10n, /is a BigInt/], [Symbol('s'), /is a symbol/], [() => 1, /is a function/]]) {
    const e = await failure(() => world.updateAgent('alice', { systemPrompt: bad }));
    assert.match(e.message, what);
    const c = await failure(() => AgentWorld.create({ name: unique('N'), storage: 'memory', turnLimit: bad }));
    assert.match(c.message, /options\.turnLimit/);
  }
  const nested = await failure(() => world.configureProvider('openai', { headers: { 'x-a': NaN } }));
  assert.match(nested.message, /headers\.x-a must be a finite number/);
  const [alice] = world.agents();
  assert.equal(alice.systemPrompt, 'be kind', 'the prompt survived');
  assert.equal(alice.temperature, 0.5, 'the temperature survived');
  // null still clears, undefined is left out, as documented.
  const cleared = await world.updateAgent('alice', { systemPrompt: null, temperature: undefined });
  assert.equal(cleared.systemPrompt, undefined);
  assert.equal(cleared.temperature, 0.5);
});

test('a mistyped or misspelled field is named with its path, and its value is not echoed', async () => {
  const world = await AgentWorld.create({ name: unique('Typo'), storage: 'memory' });
  const base = { name: 'Alice', provider: 'custom', model: 'm' };
  const wrong = await failure(() => world.addAgent({ ...base, temperature: 'x'.repeat(100_000) }));
  assert.equal(wrong.code, 'invalid_input');
  assert.equal(wrong.message, 'addAgent config.temperature must be a number (got a string)');
  const typo = await failure(() => world.addAgent({ ...base, temprature: 1 }));
  assert.match(typo.message, /^addAgent config\.temprature is not a known field; the fields are name, type, provider, model, systemPrompt, temperature,/);
  await world.addAgent(base);
  const nested = await failure(() => world.updateAgent('alice', { reasoning: { effort: 'extreme' } }));
  assert.equal(nested.message, 'updateAgent patch.reasoning.effort must be one of "low", "medium", "high" (got "extreme")');
  const listed = await failure(() => world.updateAgent('alice', { tools: ['a', 7] }));
  assert.equal(listed.message, 'updateAgent patch.tools[1] must be a string (got an integer)');
  const setting = await failure(() => world.configureProvider('openai', { apikey: 'sk-secret' }));
  assert.match(setting.message, /^settings of provider 'openai'\.apikey is not a known field; the fields are apiKey,/);
  assert.doesNotMatch(setting.message, /sk-secret/);
  const header = await failure(() => world.configureProvider('openai', { headers: { 'x-a': 5 } }));
  assert.equal(header.message, "settings of provider 'openai'.headers.x-a must be a string (got an integer)");
});

test('arguments whose property access throws become invalid_input with the error as cause', async () => {
  const world = await AgentWorld.create({ name: unique('Throwing'), storage: 'memory' });
  const boom = new Error('boom');
  const getter = { name: 'G', provider: 'custom', model: 'm', get systemPrompt() { throw boom; } };
  const trap = new Proxy({ name: 'P' }, { get() { throw boom; }, ownKeys() { throw boom; } });
  // Passes `instanceof AbortSignal`, then throws when `aborted` is read.
  const trappedSignal = new Proxy(new AbortController().signal, {
    get(target, key) { if (key === 'aborted') throw boom; return Reflect.get(target, key); },
  });
  const { proxy: revoked, revoke } = Proxy.revocable({ name: 'R' }, {});
  revoke();
  const probes = [
    ['addAgent getter', () => world.addAgent(getter)],
    ['addAgent trap', () => world.addAgent(trap)],
    ['addAgent revoked', () => world.addAgent(revoked)],
    ['create trap', () => AgentWorld.create(trap)],
    ['create revoked', () => AgentWorld.create(revoked)],
    ['create getter', () => AgentWorld.create({ storage: 'memory', get name() { throw boom; } })],
    ['open revoked', () => AgentWorld.open('x', revoked)],
    ['list trap', () => AgentWorld.list(trap)],
    ['update trap', () => world.update(trap)],
    ['updateAgent revoked', () => world.updateAgent('g', revoked)],
    ['configureProvider getter', () => world.configureProvider('openai', { get apiKey() { throw boom; } })],
    ['send options trap', () => world.send('hi', trap)],
    ['send options revoked', () => world.send('hi', revoked)],
    ['messages options trap', () => world.messages('c', trap)],
    ['events options revoked', () => world.events(revoked)],
    ['send signal getter', () => world.send('hi', { get signal() { throw boom; } })],
    ['events signal trap', () => world.events({ signal: trappedSignal })],
    ['send signal trap', () => world.send('hi', { signal: trappedSignal })],
  ];
  for (const [name, call] of probes) {
    const e = await failure(call);
    assert.equal(e.code, 'invalid_input', `${name}: ${e.message}`);
    assert.ok(e.cause instanceof Error, `${name}: no cause`);
    if (!name.includes('revoked')) assert.equal(e.cause, boom, name);
  }
  const e = await failure(() => world.addAgent(getter));
  assert.equal(e.message, 'addAgent config.systemPrompt could not be read: reading it threw (boom); pass plain data');
  // The handle is not left borrowed: it answers and frees.
  await answers(world);
  world.free();
});

test('every async method checks its arguments into a rejected promise, and a closed world rejects each with world_closed', async () => {
  const world = await AgentWorld.create({ name: unique('Async Methods'), storage: 'memory' });
  await world.addAgent({ name: 'Gil', provider: 'openai', model: 'm' });
  const chatId = world.currentChat().id;
  const calls = {
    newChat: () => world.newChat(),
    loadChat: (bad) => world.loadChat(bad ? 7 : chatId),
    deleteChat: (bad) => world.deleteChat(bad ? 7 : 'no-such-chat'),
    renameChat: (bad) => world.renameChat(chatId, bad ? 7 : 'Renamed'),
    messages: (bad) => world.messages(chatId, bad ? { limit: 0 } : undefined),
    setSessionMode: (bad) => world.setSessionMode(bad ? 'yes' : true),
    addAgent: (bad) => world.addAgent(bad ? 'Hal' : { name: 'Hal', provider: 'openai', model: 'm' }),
    updateAgent: (bad) => world.updateAgent('gil', bad ? 7 : { temperature: 1 }),
    removeAgent: (bad) => world.removeAgent(bad ? 7 : 'hal'),
    clearAgentMemory: (bad) => world.clearAgentMemory(bad ? 7 : 'gil'),
    approve: (bad) => world.approve(bad ? 7 : 'no-such-approval'),
    deny: (bad) => world.deny('no-such-approval', bad ? 7 : undefined),
    regenerate: (bad) => world.regenerate(bad ? 7 : 'no-such-message'),
    editMessage: (bad) => world.editMessage(bad ? 7 : 'no-such-message', 'x'),
    deleteMessage: (bad) => world.deleteMessage(bad ? 7 : 'no-such-message'),
    export: () => world.export(),
    update: (bad) => world.update(bad ? 7 : { description: 'updated' }),
  };
  const settle = (p) => p.then((v) => ({ v }), (e) => ({ e }));
  // Each method does its own work (what comes back tells them apart).
  const got = {};
  for (const [name, call] of Object.entries(calls)) got[name] = await settle(call(false));
  assert.equal(got.newChat.v.id, world.currentChat().id);
  assert.equal(got.loadChat.v.id, chatId);
  assert.equal(got.deleteChat.v, false);
  assert.equal(got.renameChat.v.name, 'Renamed');
  assert.deepEqual(got.messages.v, []);
  assert.equal(got.setSessionMode.v, undefined);
  assert.equal(got.addAgent.v.id, 'hal');
  assert.equal(got.updateAgent.v.temperature, 1);
  assert.equal(got.removeAgent.v, true);
  assert.equal(got.clearAgentMemory.v, undefined);
  assert.equal(got.approve.e.code, 'approval_not_found');
  assert.equal(got.deny.e.code, 'approval_not_found');
  assert.equal(got.regenerate.e.code, 'message_not_found');
  assert.equal(got.editMessage.e.code, 'message_not_found');
  assert.equal(got.deleteMessage.e.code, 'message_not_found');
  assert.equal(JSON.parse(got.export.v).world.description, undefined);
  assert.equal(got.update.v.description, 'updated');
  // Bad arguments: a rejected promise, never a throw.
  for (const [name, call] of Object.entries(calls)) {
    if (name === 'newChat' || name === 'export') continue;
    const p = call(true);
    assert.ok(p instanceof Promise, name);
    const { e } = await settle(p);
    assert.equal(e?.code, 'invalid_input', `${name}: ${e?.message}`);
  }
  world.free();
  for (const [name, call] of Object.entries(calls)) {
    const p = call(false);
    assert.ok(p instanceof Promise, name);
    assert.equal((await settle(p)).e?.code, 'world_closed', name);
  }
});

test('free() during a streaming reply stops it; later calls reject with world_closed', async () => {
  const world = await AgentWorld.create({ name: unique('Free'), storage: 'memory' });
  let aborted = false;
  let streaming;
  const started = new Promise((resolve) => { streaming = resolve; });
  world.registerProvider({
    async *stream(_request, { signal }) {
      yield 'partial';
      streaming();
      await new Promise((resolve) => signal.addEventListener('abort', () => { aborted = true; resolve(); }));
    },
  });
  await world.addAgent({ name: 'Slow', provider: 'custom', model: 'm' });
  const id = world.id;
  await world.send('@slow tell me everything');
  const idle = world.idle();
  const pendingChats = world.messages(world.currentChat().id);
  const iteration = (async () => {
    let seen = 0;
    for await (const _ of world.events()) seen++;
    return seen;
  })();
  await started;
  world.free(); // threw "attempted to take ownership of Rust value while it was borrowed"
  await idle; // the stop ends the work: idle() settles
  assert.equal(aborted, true, "the provider's signal aborted");
  const ended = await Promise.race([iteration, new Promise((r) => setTimeout(r, 2000, 'waiting'))]);
  assert.equal(typeof ended, 'number', 'a for await over the closed world ended');
  assert.ok(Array.isArray(await pendingChats));
  world.free(); // twice is fine
  world[Symbol.dispose]();
  assert.equal(world.id, id, 'the id stays readable');
  for (const [name, call] of [
    ['send', () => world.send('hello?')],
    ['addAgent', () => world.addAgent({ name: 'X', provider: 'custom', model: 'm' })],
    ['idle', () => world.idle()],
    ['info', () => world.info()],
    ['on', () => world.on('message', () => {})],
    ['export', () => world.export()],
    // Before reading the arguments, as every method: a closed world is the first thing said.
    ['registerTool', () => world.registerTool(7)],
    ['unregisterTool', () => world.unregisterTool(7)],
    ['setInstructions', () => world.setInstructions(7, 7)],
    ['agentMemory', () => world.agentMemory(7)],
  ]) {
    const e = await failure(call);
    assert.equal(e.code, 'world_closed', `${name}: ${e.message}`);
  }
  const rejected = world.send('x');
  assert.ok(rejected instanceof Promise, 'async methods reject, they do not throw');
  await rejected.catch(() => {});
  world.stop(); // harmless on a closed world
  // A method without its world, or on a plain object, is world_closed too (not "null pointer").
  const { info } = world;
  assert.equal((await failure(() => info())).code, 'world_closed');
  assert.equal((await failure(() => AgentWorld.prototype.send.call({}, 'x'))).code, 'world_closed');
  // The world itself is kept: open it again.
  const again = await AgentWorld.open(id, { storage: 'memory' });
  assert.ok(again.agents().some((a) => a.id === 'slow'));
});

test('free() while a storage call is pending succeeds and the call still settles', async () => {
  const map = new Map();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let slow = false;
  const adapter = {
    async get(k) { return map.get(k); },
    async put(k, v) { map.set(k, v); },
    async delete(k) { map.delete(k); },
    async list(prefix) { return [...map].filter(([k]) => k.startsWith(prefix)).sort(); },
    async batch(ops) {
      if (slow) await gate;
      for (const op of ops) op.type === 'put' ? map.set(op.key, op.value) : map.delete(op.key);
    },
  };
  const world = await AgentWorld.create({ name: unique('Pending'), storage: adapter });
  slow = true;
  const adding = world.addAgent({ name: 'Late', provider: 'custom', model: 'm' });
  await new Promise((r) => setTimeout(r, 20));
  world.free();
  release();
  const agent = await adding;
  assert.equal(agent.id, 'late', 'the call that was running completed');
  assert.equal((await failure(() => world.agents())).code, 'world_closed');
});

test('a rejected promise from an on() callback is reported as callback_error, not unhandled', async () => {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const world = await AgentWorld.create({ name: unique('Async cb'), storage: 'memory' });
    const errors = [];
    world.on('system', (e) => { if (e.type === 'error') errors.push(e); });
    // A system callback that always rejects must not loop on its own reports.
    world.on('system', async (e) => { if (e.code === 'callback_error') throw new Error('loop?'); });
    world.on('message', async (m) => { if (m.sender === 'HUMAN') throw new Error(`no thanks: ${m.content}`); });
    await world.send('hello');
    await new Promise((r) => setTimeout(r, 50));
    const reports = errors.filter((e) => e.code === 'callback_error');
    assert.deepEqual(reports.map((e) => e.message),
      ["a 'message' event callback failed: no thanks: hello"]);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a StoreAdapter call that never settles fails with storage_error after timeoutMs', async () => {
  const map = new Map();
  const adapter = {
    timeoutMs: 100,
    async get(k) { return map.get(k); },
    async put() {},
    async delete() {},
    async list(prefix) { return [...map].filter(([k]) => k.startsWith(prefix)).sort(); },
    batch() { return new Promise(() => {}); },
  };
  const e = await failure(() => AgentWorld.create({ name: unique('Hang'), storage: adapter }));
  assert.equal(e.code, 'storage_error');
  assert.equal(e.reason, 'backend');
  assert.match(e.message, /the store adapter's batch\(\) of \d+ writes did not settle within 0\.1 s \(StoreAdapter\.timeoutMs = 100\)/);
  const bad = await failure(() => AgentWorld.list({ storage: { ...adapter, timeoutMs: -1 } }));
  assert.equal(bad.code, 'invalid_input');
  assert.match(bad.message, /timeoutMs/);
});

test('a quota DOMException with an empty message still says what happened', async () => {
  const adapter = {
    async get() { return undefined; },
    async put() {},
    async delete() {},
    async list() { return []; },
    async batch() { throw new DOMException('', 'QuotaExceededError'); },
  };
  const e = await failure(() => AgentWorld.create({ name: unique('Quota'), storage: adapter }));
  assert.equal(e.code, 'storage_error');
  assert.equal(e.reason, 'quota_exceeded');
  assert.match(e.message, /batch\(\) of \d+ writes failed: QuotaExceededError;/);
});
