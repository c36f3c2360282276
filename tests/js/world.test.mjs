// The world API of the built package (pkg/nodejs) from JavaScript, against the mock LLM:
// agents streaming through the engine, the fetch transport and the bindings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startMockLlm } from '../mock-llm/server.mjs';

const require = createRequire(import.meta.url);
const { AgentWorld, isAgentWorldError, storageEstimate, requestPersistentStorage } =
  require('../../pkg/nodejs/agent_world_wasm.js');

let mock;
before(async () => { mock = await startMockLlm({ port: 0, delayMs: 0 }); });
after(async () => { await mock?.close(); });

let n = 0;
const uniqueName = (base) => `${base} ${process.pid} ${++n}`;

async function pingPongWorld(turnLimit) {
  const world = await AgentWorld.create({ name: uniqueName('Ping Pong'), turnLimit });
  world.configureProvider('openai', { apiKey: 'test-key', baseUrl: `${mock.url}/v1` });
  await world.addAgent({ name: 'Alice', provider: 'openai', model: 'mock-alice',
    systemPrompt: 'mock-reply: @bob ping {n}' });
  await world.addAgent({ name: 'Bob', provider: 'openai', model: 'mock-bob',
    systemPrompt: 'mock-reply: @alice pong {n}' });
  return world;
}

test('two agents ping-pong to the turn limit, streaming every reply', async () => {
  const world = await pingPongWorld(2);
  const messages = [];
  const sse = [];
  const offMessage = world.on('message', (m) => messages.push(m));
  world.on('sse', (e) => sse.push(e));

  const sent = await world.send('@alice start the ping-pong');
  assert.equal(sent.sender, 'HUMAN');
  assert.equal(sent.content, '@alice start the ping-pong');
  await world.idle();

  assert.deepEqual(messages.map((m) => [m.sender, m.kind, m.content]), [
    ['HUMAN', 'message', '@alice start the ping-pong'],
    ['alice', 'message', '@bob ping 1'],
    ['bob', 'message', '@alice pong 1'],
    ['alice', 'message', '@bob ping 2'],
    ['bob', 'message', '@alice pong 2'],
    ['alice', 'turn-limit',
      '@human Turn limit reached (2 LLM calls). Please take control of the conversation.'],
  ]);
  // Each reply streamed: start, chunks, end — with the id of the message that published it.
  const replyIds = messages.filter((m) => m.kind === 'message' && m.sender !== 'HUMAN')
    .map((m) => m.messageId);
  for (const id of replyIds) {
    const own = sse.filter((e) => e.messageId === id).map((e) => e.type);
    assert.equal(own[0], 'start');
    assert.equal(own.at(-1), 'end');
    assert.ok(own.filter((t) => t === 'chunk').length >= 2, `reply ${id} did not stream`);
  }
  offMessage();
  await world.send('hello both');
  await world.idle();
  assert.equal(messages.length, 6, 'unsubscribed callbacks get nothing');
});

test('a callback that throws is reported and breaks nothing', async () => {
  const world = await pingPongWorld(1);
  const errors = [];
  world.on('message', () => { throw new Error('boom'); });
  world.on('system', (e) => e.type === 'error' && errors.push(e));
  const got = [];
  world.on('message', (m) => got.push(m.content));
  await world.send('@bob hi');
  await world.idle();
  assert.ok(got.includes('@alice pong 1'));
  assert.ok(errors.some((e) => e.code === 'callback_error' && e.message.includes('boom')));
});

test('bad input is an AgentWorldError with a stable code, never a trap', async () => {
  const world = await pingPongWorld(3);
  const cases = [
    [() => world.send(''), 'empty_message'],
    [() => world.send(42), 'invalid_input'],
    [() => world.send('hi', { sender: 7 }), 'invalid_input'],
    [() => world.addAgent({ name: 'Alice', provider: 'openai', model: 'm' }), 'agent_exists'],
    [() => world.addAgent({ name: 'Human', provider: 'openai', model: 'm' }), 'reserved_name'],
    [() => world.addAgent({ name: 'Carol', provider: 'openai', model: 'm', colour: 'red' }), 'invalid_input'],
    [() => world.loadChat('nope'), 'chat_not_found'],
    [() => AgentWorld.create({ name: uniqueName('Bad'), turnLimit: -1 }), 'invalid_turn_limit'],
    [() => AgentWorld.create('not an object'), 'invalid_input'],
  ];
  for (const [call, code] of cases) {
    await assert.rejects(call, (e) => {
      assert.ok(isAgentWorldError(e), `not an AgentWorldError: ${e}`);
      assert.ok(e instanceof Error);
      assert.equal(e.code, code, e.message);
      return true;
    });
  }
  assert.throws(() => world.on('nope', () => {}), (e) => e.code === 'invalid_input');
  assert.throws(() => world.configureProvider('opnai', {}), (e) => e.code === 'provider_not_configured');
});

test('errors quote a rejected number as JavaScript writes it', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Numbers') });
  const cases = [
    [() => world.addAgent({ name: 'A', provider: 'openai', model: 'm', maxSteps: 1e21 }),
      'invalid_input', 'invalid maxSteps: 1e+21 is out of range; use an integer from 1 to 50'],
    [() => world.addAgent({ name: 'B', provider: 'openai', model: 'm', temperature: 1e300 }),
      'invalid_input', 'invalid temperature: 1e+300 is out of range; use a number from 0 to 2'],
    [() => world.addAgent({ name: 'C', provider: 'openai', model: 'm', temperature: -0.5 }),
      'invalid_input', 'invalid temperature: -0.5 is out of range; use a number from 0 to 2'],
    [() => AgentWorld.create({ name: uniqueName('Bad'), turnLimit: 2.5 }),
      'invalid_turn_limit', 'turnLimit 2.5 is invalid; use an integer of at least 1 (0 or none means 5)'],
  ];
  for (const [call, code, text] of cases) {
    await assert.rejects(call, (e) => {
      assert.equal(e.code, code, e.message);
      assert.ok(e.message.includes(text), e.message);
      return true;
    });
  }
});

test('addAgent fills the defaults and checks each field as updateAgent does, in the same order', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Agent Fields') });
  const dana = await world.addAgent({ name: '  Dana  ', provider: 'OpenAI', model: ' m ', type: '  ',
    systemPrompt: '   ' });
  assert.deepEqual(
    [dana.id, dana.name, dana.provider, dana.model, dana.type, dana.systemPrompt, dana.stream,
      dana.status, dana.maxSteps, dana.tools, dana.llmCallCount],
    ['dana', 'Dana', 'openai', 'm', 'default', undefined, true, 'active', undefined, undefined, 0]);
  // A type given is kept as written (blank alone means the default).
  assert.equal((await world.addAgent({ name: 'Eve', provider: 'openai', model: 'm', type: ' critic ' })).type,
    ' critic ');
  // Several bad fields: both methods name the same first one, with the same text.
  const bad = [
    [{ provider: 'nope', model: ' ', temperature: 5 }, 'provider'],
    [{ model: ' ', temperature: 5, maxSteps: 0 }, 'invalid model: is blank'],
    [{ temperature: 5, maxTokens: 0, historyLimit: -1 }, 'invalid temperature'],
    [{ historyLimit: -1, tools: ['x', 'x'], maxSteps: 0 }, 'invalid historyLimit'],
    [{ maxSteps: 0, reasoning: { budgetTokens: 0 } }, 'invalid maxSteps'],
  ];
  for (const [fields, says] of bad) {
    const added = await world.addAgent({ name: 'Fay', provider: 'openai', model: 'm', ...fields })
      .then(() => null, (e) => e);
    const updated = await world.updateAgent('dana', fields).then(() => null, (e) => e);
    assert.ok(added && updated, `accepted: ${JSON.stringify(fields)}`);
    assert.equal(added.code, 'invalid_input', added.message);
    assert.ok(added.message.includes(says), added.message);
    assert.equal(added.message, updated.message);
  }
  assert.deepEqual(world.agents().map((a) => a.id), ['dana', 'eve']);
});

test('configureProvider refuses a key, header or URL that fetch cannot send; the world keeps answering', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Bad Key') });
  const secret = 'sk-test-SECRET';
  for (const [settings, says] of [
    [{ apiKey: `${secret}\u200b` }, 'apiKey has U+200B (zero-width space) at position 15'],
    [{ apiKey: `\u201c${secret}\u201d` }, 'apiKey has U+201C (curly double quote) at position 1'],
    [{ apiKey: `${secret}\u00e9` }, 'apiKey has U+00E9 at position 15'],
    [{ apiKey: 'k', headers: { 'X Foo': '1' } }, 'headers["X Foo"] is not a valid HTTP header name: U+0020 (space) at position 2'],
    [{ apiKey: 'k', headers: { 'x-token': `${secret}\r\nx-injected: 1` } }, 'headers["x-token"] has U+000D (carriage return) at position 15'],
    [{ apiKey: 'k', baseUrl: `http://user:${secret}@127.0.0.1:1/v1` }, "baseUrl must not contain user-info (user:password@), which fetch refuses: send credentials with apiKey or headers instead (got 'http://***@127.0.0.1:1/v1')"],
  ]) {
    assert.throws(() => world.configureProvider('openai', { baseUrl: `${mock.url}/v1`, ...settings }), (e) => {
      assert.ok(isAgentWorldError(e), String(e));
      assert.equal(e.code, 'invalid_input', e.message);
      assert.ok(e.message.includes(says), e.message);
      assert.ok(!e.message.includes('SECRET'), `the message quotes the secret: ${e.message}`);
      return true;
    });
  }
  // Nothing was kept and nothing broke: the right key works at once.
  world.configureProvider('openai', { apiKey: 'test-key', baseUrl: `${mock.url}/v1` });
  await world.addAgent({ name: 'Alice', provider: 'openai', model: 'mock-alice', systemPrompt: 'mock-reply: still here' });
  const messages = [];
  world.on('message', (m) => messages.push(m));
  await world.send('hi');
  await world.idle();
  assert.deepEqual(messages.map((m) => [m.sender, m.content]), [['HUMAN', 'hi'], ['alice', 'still here']]);
});

test('a provider that is not configured fails the call, not the world', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Unconfigured') });
  await world.addAgent({ name: 'Claude', provider: 'anthropic', model: 'claude-test' });
  const system = [];
  world.on('system', (e) => system.push(e));
  await world.send('hello');
  await world.idle();
  const err = system.find((e) => e.type === 'error');
  assert.equal(err.code, 'provider_not_configured');
  assert.match(err.message, /provider 'anthropic' is not configured: missing apiKey/);
});

test('Node has no storage manager: no estimate, and persistence is not granted', async () => {
  assert.equal(await storageEstimate(), null);
  assert.equal(await requestPersistentStorage(), false);
});

test("a storage manager's answers, and its failure as storage_error with the cause", async () => {
  const boom = new Error('boom');
  const storage = {
    async estimate() { return { usage: 5, quota: 'lots', extra: 1 }; },
    persist() { throw boom; },
  };
  const had = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', { value: { storage }, configurable: true, writable: true });
  try {
    assert.deepEqual(await storageEstimate(), { usage: 5, quota: 0 });
    const e = await requestPersistentStorage().then(() => null, (e) => e);
    assert.ok(isAgentWorldError(e));
    assert.equal(e.code, 'storage_error');
    assert.equal(e.message, 'navigator.storage.persist() failed');
    assert.equal(e.cause, boom);
    storage.persist = async () => 'yes';
    assert.equal(await requestPersistentStorage(), true);
    storage.estimate = () => Promise.reject(boom);
    const rejected = await storageEstimate().then(() => null, (e) => e);
    assert.equal(rejected.code, 'storage_error');
    assert.equal(rejected.cause, boom);
    storage.estimate = 'not a function';
    assert.equal(await storageEstimate(), null);
  } finally {
    if (had) Object.defineProperty(globalThis, 'navigator', had);
    else delete globalThis.navigator;
  }
});

test('worlds in memory storage can be listed, reopened and deleted', async () => {
  const world = await pingPongWorld(3);
  const id = world.id;
  assert.ok((await AgentWorld.list()).some((w) => w.id === id));
  const again = await AgentWorld.open(id);
  assert.deepEqual(again.agents().map((a) => a.id), ['alice', 'bob']);
  assert.equal(await AgentWorld.delete(id), true);
  assert.equal(await AgentWorld.delete(id), false);
  await assert.rejects(AgentWorld.open(id), (e) => e.code === 'world_not_found');
  await assert.rejects(AgentWorld.create({ name: 'x', storage: 'indexeddb' }),
    (e) => e.code === 'storage_unavailable');
});

test('a StoreAdapter that rejects: storage_error with the adapter\'s own Error as cause', async () => {
  const map = new Map();
  const thrown = new Error('the disk is full');
  let failNext = false;
  const adapter = {
    async get(key) { return map.get(key); },
    async put(key, value) { map.set(key, value); },
    async delete(key) { map.delete(key); },
    async list(prefix) {
      return [...map.keys()].filter((k) => k.startsWith(prefix)).sort().map((k) => [k, map.get(k)]);
    },
    async batch(ops) {
      if (failNext) { failNext = false; throw thrown; }
      for (const op of ops) op.type === 'put' ? map.set(op.key, op.value) : map.delete(op.key);
    },
  };
  const world = await AgentWorld.create({ name: uniqueName('Full Disk'), storage: adapter });
  const events = [];
  world.on('system', (e) => e.type === 'error' && events.push(e));
  await world.send('kept');

  failNext = true;
  const err = await world.send('lost').then(() => null, (e) => e);
  assert.ok(isAgentWorldError(err), String(err));
  assert.deepEqual([err.code, err.reason], ['storage_error', 'backend']);
  assert.match(err.message, /the disk is full/);
  assert.equal(err.cause, thrown, 'the very Error the adapter threw, stack and all');
  assert.deepEqual(events.map((e) => [e.code, e.reason]), [['storage_error', 'backend']]);

  // Nothing of the failed send was kept, and the world goes on.
  await world.send('after');
  const chat = world.currentChat();
  assert.deepEqual((await world.messages(chat.id)).map((m) => m.content), ['kept', 'after']);
  // An error with no underlying exception has no cause.
  const empty = await world.send(' ').then(() => null, (e) => e);
  assert.equal(empty.code, 'empty_message');
  assert.equal('cause' in empty, false);
});

test('returned values are plain JSON data: unset fields absent, empty ones null, numbers as numbers', async () => {
  // Values cross the boundary as JSON text (convert.rs's to_js): this pins what callers see,
  // whatever the route.
  const world = await AgentWorld.create({ name: uniqueName('Shapes'), storage: 'memory' });
  const info = world.info();
  assert.equal(Object.getPrototypeOf(info), Object.prototype);
  assert.deepEqual(Object.keys(info),
    ['id', 'name', 'turnLimit', 'historyLimit', 'currentChatId', 'createdAt', 'lastUpdated']);
  assert.equal(typeof info.currentChatId, 'string');
  assert.equal(info.turnLimit, 5);
  const agent = await world.addAgent({ name: 'Shape', provider: 'openai', model: 'm', temperature: 0.25 });
  assert.deepEqual(Object.keys(agent), ['id', 'name', 'type', 'provider', 'model', 'temperature',
    'stream', 'llmCallCount', 'createdAt', 'lastActive', 'status']);
  assert.equal(agent.temperature, 0.25);
  assert.equal(agent.llmCallCount, 0);
  assert.equal(agent.stream, true);
  await world.setSessionMode(false);
  assert.equal(world.info().currentChatId, null);
  assert.equal(Object.hasOwn(world.info(), 'currentChatId'), true);
  assert.equal(world.currentChat(), null);
  assert.equal(world.agentMemory('nobody'), undefined);
  const [listed] = (await AgentWorld.list({ storage: 'memory' })).filter((w) => w.id === world.id);
  assert.equal(listed.currentChatId, null);
  assert.ok(Array.isArray(world.listChats()));
  world.free();
});
