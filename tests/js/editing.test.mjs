// Editing the conversation (spec §10) and `unanswered` (§8) through the JS API, over the Node
// package: regenerate, editMessage, deleteMessage with their errors, and the events a UI uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld, isAgentWorldError } = require('../../pkg/nodejs/agent_world_wasm.js');
let n = 0;
const name = (base) => `${base} ${process.pid} ${++n}`;

/** A world whose agents answer with the next text of `replies[agent]` (the request's agentName
 * is not needed: one model per agent). Records every request. */
async function world(replies) {
  const w = await AgentWorld.create({ name: name('Editing') });
  const requests = [];
  w.registerProvider({
    async *stream(request) {
      requests.push(request);
      const next = replies[request.model].shift();
      if (next instanceof Error) throw next;
      yield next;
    },
  });
  for (const agent of Object.keys(replies)) await w.addAgent({ name: agent, provider: 'custom', model: agent });
  const system = [];
  w.on('system', (e) => system.push(e));
  return { w, requests, system };
}

const texts = async (w) => (await w.messages(w.currentChat().chatId ?? w.currentChat().id)).map((m) => m.content);

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(isAgentWorldError(e), String(e));
    assert.equal(e.code, code, e.message);
    return true;
  });
}

test('regenerate: the new reply takes the old one\'s place; message-replaced; a failed reply by {agent}', async () => {
  const { w, requests, system } = await world({ alice: ['first', 'second', 'third'], bob: [new Error('down'), 'bob ok'] });
  const q = await w.send('Hello all');
  await w.idle();
  assert.deepEqual(await texts(w), ['Hello all', 'first']);
  const old = (await w.messages(w.currentChat().id)).find((m) => m.content === 'first');
  const newId = await w.regenerate(old.messageId);
  assert.equal(typeof newId, 'string');
  await w.idle();
  const after = await w.messages(w.currentChat().id);
  assert.deepEqual(after.map((m) => m.content), ['Hello all', 'second']);
  assert.equal(after[1].messageId, newId);
  assert.equal(after[1].replyToMessageId, q.messageId);
  assert.deepEqual(system.filter((e) => e.type === 'message-replaced'), [
    { type: 'message-replaced', oldMessageId: old.messageId, messageId: newId },
  ]);
  assert.deepEqual(requests.at(-1).messages, [{ role: 'user', content: 'Hello all' }], 'the memory before the old reply');
  assert.ok(!w.agentMemory('alice').some((e) => e.content === 'first'));
  // Bob failed: name the message he answered and him.
  await w.regenerate(q.messageId, { agent: 'bob' });
  await w.idle();
  assert.deepEqual(await texts(w), ['Hello all', 'second', 'bob ok']);
});

test('regenerate, editMessage and deleteMessage reject bad input with stable codes', async () => {
  const { w } = await world({ alice: ['a1', 'a2'] });
  const q = await w.send('hi');
  await w.idle();
  const reply = (await w.messages(w.currentChat().id))[1];
  await rejectsWith(w.regenerate('no-such-id'), 'message_not_found');
  await rejectsWith(w.regenerate(q.messageId), 'invalid_input');
  await rejectsWith(w.regenerate(q.messageId, { agent: 'zed' }), 'agent_not_found');
  await rejectsWith(w.regenerate(42), 'invalid_input');
  await rejectsWith(w.regenerate(reply.messageId, 'alice'), 'invalid_input');
  await rejectsWith(w.editMessage(reply.messageId, 'x'), 'invalid_input');
  await rejectsWith(w.editMessage(q.messageId, '   '), 'empty_message');
  await rejectsWith(w.editMessage('nope', 'x'), 'message_not_found');
  await rejectsWith(w.deleteMessage('nope'), 'message_not_found');
  assert.deepEqual(await texts(w), ['hi', 'a1']);
});

test('editMessage replaces the message and everything after it; deleteMessage removes one', async () => {
  const { w, requests } = await world({ alice: ['a1', 'a2', 'a3'] });
  await w.send('one');
  await w.idle();
  const two = await w.send('two');
  await w.idle();
  const edited = await w.editMessage(two.messageId, 'two, edited');
  assert.notEqual(edited.messageId, two.messageId);
  assert.equal(edited.content, 'two, edited');
  await w.idle();
  assert.deepEqual(await texts(w), ['one', 'a1', 'two, edited', 'a3']);
  assert.deepEqual(requests.at(-1).messages.map((m) => m.content), ['one', 'a1', 'two, edited']);
  assert.equal(w.currentChat().messageCount, 4);
  const first = (await w.messages(w.currentChat().id))[0];
  await w.deleteMessage(first.messageId);
  assert.deepEqual(await texts(w), ['a1', 'two, edited', 'a3']);
  assert.equal(w.currentChat().messageCount, 3);
  assert.ok(!w.agentMemory('alice').some((e) => e.content === 'one'));
});

test('unanswered: a human message nobody will answer says why', async () => {
  const { w, system } = await world({ alice: [] });
  const m = await w.send('I think @alice knows');
  await w.idle();
  assert.deepEqual(system.filter((e) => e.type === 'unanswered'), [
    { type: 'unanswered', messageId: m.messageId, reason: 'mid-line-mention', mentions: ['alice'] },
  ]);
});
