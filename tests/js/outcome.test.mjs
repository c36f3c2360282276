// Issue 15: the API tells you what happened. sendAndWait resolves with a message's replies and
// errors; an LLM error nobody listens to is warned about once on the console (an option turns
// it off); create({ifExists: "open"}) is open-or-create; import({as: "copy"}) restores a backup
// next to the live world.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld, isAgentWorldError } = require('../../pkg/nodejs/agent_world_wasm.js');
let n = 0;
const name = (base) => `${base} ${process.pid} ${++n}`;

/** Agents whose model is their name; each answers with the next of `replies[model]`. */
async function world(replies, options = {}) {
  const w = await AgentWorld.create({ name: name('Outcome'), ...options });
  w.registerProvider({
    async *stream(request) {
      const next = replies[request.model].shift();
      if (next instanceof Error) throw next;
      yield next;
    },
  });
  for (const agent of Object.keys(replies)) await w.addAgent({ name: agent, provider: 'custom', model: agent });
  return w;
}

/** Runs `fn` with console.warn recorded. */
async function withWarnings(fn) {
  const warned = [];
  const original = console.warn;
  console.warn = (...args) => warned.push(args.join(' '));
  try {
    await fn();
  } finally {
    console.warn = original;
  }
  return warned;
}

test('sendAndWait resolves with the replies (hand-overs included) and the errors of that message only', async () => {
  const w = await world({ alice: ['@bob over to you', 'not this one'], bob: ['bob here', 'done here <world>done</world>'], carol: [new Error('carol is down')] });
  const { message, replies, errors } = await w.sendAndWait('Hello everyone');
  assert.equal(message.content, 'Hello everyone');
  // Everyone answers the public message; Alice's hand-over to Bob is part of its work (Bob
  // ends it with a world tag, so his reply is not auto-mentioned back to Alice).
  assert.deepEqual(replies.map((r) => [r.sender, r.content]),
    [['alice', '@bob over to you'], ['bob', 'bob here'], ['bob', 'done here']]);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].type, 'error');
  assert.equal(errors[0].agentName, 'carol');
  assert.equal(errors[0].agentDisplayName, 'carol');
  assert.equal(errors[0].replyToMessageId, message.messageId);
  assert.match(errors[0].message, /carol is down/);
  // Nobody answers: resolves at once with nothing.
  const none = await w.sendAndWait('I think @zed knows');
  assert.deepEqual([none.replies, none.errors], [[], []]);
});

test('an LLM error with no system listener is warned about once; a listener or the option silences it', async () => {
  const w = await world({ alice: [new Error('wrong baseUrl'), new Error('again'), new Error('third')] });
  let warned = await withWarnings(async () => {
    await w.send('hi');
    await w.idle();
  });
  assert.equal(warned.length, 1, warned.join('\n'));
  assert.match(warned[0], /alice could not answer: .*wrong baseUrl.*\(llm_error\)/);
  assert.doesNotMatch(warned[0], /\[Error\]/);
  const off = w.on('system', () => {});
  warned = await withWarnings(async () => {
    await w.send('hi again');
    await w.idle();
  });
  assert.deepEqual(warned, [], 'a system listener handles errors');
  off();
  const quiet = await world({ bob: [new Error('down')] }, { warnUnhandledErrors: false });
  warned = await withWarnings(async () => {
    await quiet.send('hi');
    await quiet.idle();
  });
  assert.deepEqual(warned, [], 'warnUnhandledErrors: false');
  await assert.rejects(AgentWorld.create({ name: name('Bad'), warnUnhandledErrors: 'no' }),
    (e) => isAgentWorldError(e) && e.code === 'invalid_input' && /warnUnhandledErrors/.test(e.message));
});

test('create({ifExists: "open"}) opens the stored world instead of failing', async () => {
  const storage = 'memory';
  const n1 = name('Reload');
  const first = await AgentWorld.create({ name: n1, storage });
  await first.addAgent({ name: 'Alice', provider: 'openai', model: 'm' });
  await assert.rejects(AgentWorld.create({ name: n1, storage }), (e) => e.code === 'world_exists');
  const again = await AgentWorld.create({ name: n1, storage, ifExists: 'open' });
  assert.equal(again.id, first.id);
  assert.deepEqual(again.agents().map((a) => a.id), ['alice']);
  const fresh = await AgentWorld.create({ name: name('Fresh'), storage, ifExists: 'open' });
  assert.deepEqual(fresh.agents(), []);
  await assert.rejects(AgentWorld.create({ name: n1, storage, ifExists: 'maybe' }),
    (e) => e.code === 'invalid_input' && e.message === 'AgentWorld.create options.ifExists must be "error" or "open"');
});

test('import({as: "copy"}) restores a backup next to the live world', async () => {
  const w = await world({ alice: ['a1'] }, { storage: 'memory' });
  await w.send('hello');
  await w.idle();
  const backup = await w.export();
  await assert.rejects(AgentWorld.import(backup, { storage: 'memory' }), (e) => e.code === 'world_exists');
  const copy = await AgentWorld.import(backup, { storage: 'memory', as: 'copy' });
  assert.equal(copy.info().name, `${w.info().name} (copy)`);
  assert.equal(copy.id, `${w.id}-copy`);
  assert.deepEqual((await copy.messages(copy.currentChat().id)).map((m) => m.content), ['hello', 'a1']);
  const named = await AgentWorld.import(backup, { storage: 'memory', as: 'copy', name: `${w.info().name} restored` });
  assert.equal(named.id, `${w.id}-restored`);
  await assert.rejects(AgentWorld.import(backup, { storage: 'memory', name: 'x' }),
    (e) => e.code === 'invalid_input' && /name/.test(e.message));
  for (const [options, message] of [
    [{ as: 'backup' }, 'AgentWorld.import options.as must be "original" or "copy"'],
    [{ as: 'copy', name: 7 }, 'AgentWorld.import options.name must be a string'],
  ]) {
    await assert.rejects(AgentWorld.import(backup, { storage: 'memory', ...options }),
      (e) => e.code === 'invalid_input' && e.message === message);
  }
  assert.deepEqual((await w.messages(w.currentChat().id)).length, 2, 'the live world is untouched');
});
