// The checks of the packed-package conversation (conversation.mjs), in Node, applied to the
// report each runtime returned: one place, so every runtime is held to the same checks.
import assert from 'node:assert/strict';
import { FIRST, SECOND } from './conversation.mjs';

/** The checks, in Node (node:assert), for the report of `runtime`. */
export function assertConversation(report, runtime, expectedVersion) {
  const where = `[${runtime}]`;
  assert.equal(report.failure, undefined, `${where} ${report.failure}`);
  assert.equal(report.version, expectedVersion, `${where} version()`);
  assert.deepEqual(report.errors, [], `${where} system errors`);
  const about = (m, q) => m.content.startsWith(`${m.sender === 'alice' ? 'Alice' : 'Bob'} here. About "${q}"`);
  const humans = report.messages.filter((m) => m.sender === 'HUMAN').map((m) => m.content);
  assert.deepEqual(humans, [FIRST, SECOND], `${where} the human messages`);
  const replies = report.messages.filter((m) => m.sender !== 'HUMAN');
  // Both answer the public message; only Bob answers the one addressed to him.
  assert.deepEqual(replies.map((m) => m.sender).sort(), ['alice', 'bob', 'bob'], `${where} ${JSON.stringify(replies)}`);
  assert.equal(replies.filter((m) => about(m, FIRST)).length, 2, `${where} both answer "${FIRST}"`);
  const last = replies.filter((m) => about(m, SECOND));
  assert.deepEqual(last.map((m) => m.sender), ['bob'], `${where} only Bob answers "${SECOND}"`);
  // Every reply streamed: start, at least two chunks, end, under the published message's id,
  // and the chunks in order are the published text.
  for (const m of replies) {
    assert.equal(m.kind, 'message', `${where} ${m.sender}'s reply kind`);
    const events = report.sse.filter((e) => e.messageId === m.messageId);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'start', `${where} ${types}`);
    assert.equal(types.at(-1), 'end', `${where} ${types}`);
    const chunks = events.filter((e) => e.type === 'chunk');
    assert.ok(chunks.length >= 2, `${where} ${m.sender}'s reply was not streamed (${chunks.length} chunk)`);
    assert.equal(chunks.map((e) => e.content).join(''), m.content, `${where} chunks in order`);
    assert.ok(events.every((e) => e.agentName === m.sender), `${where} SSE agentName`);
  }
  assert.equal(new Set(report.sse.map((e) => e.messageId)).size, 3, `${where} three streamed replies`);
}
