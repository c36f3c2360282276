// The checks of the packed-package conversation (conversation.mjs), in Node, applied to the
// report each runtime returned: one place, so every runtime is held to the same checks.
import assert from 'node:assert/strict';
import { FIRST, SECOND, THIRD, TOOL_REPLY } from './conversation.mjs';

/** The checks, in Node (node:assert), for the report of `runtime`. */
export function assertConversation(report, runtime, expectedVersion) {
  const where = `[${runtime}]`;
  assert.equal(report.failure, undefined, `${where} ${report.failure}`);
  assert.equal(report.version, expectedVersion, `${where} version()`);
  assert.deepEqual(report.errors, [], `${where} system errors`);
  const about = (m, q) => m.content.startsWith(`${m.sender === 'alice' ? 'Alice' : 'Bob'} here. About "${q}"`);
  const humans = report.messages.filter((m) => m.sender === 'HUMAN').map((m) => m.content);
  assert.deepEqual(humans, [FIRST, SECOND, THIRD], `${where} the human messages`);
  const replies = report.messages.filter((m) => m.sender !== 'HUMAN' && m.sender !== 'calc');
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
  assert.equal(new Set(report.sse.map((e) => e.messageId)).size, 4, `${where} four streamed replies`);

  // The tool-using reply: the tool ran once in this runtime, with the model's arguments and its
  // context; the call and result streamed into the reply; the published reply says the result
  // (the model saw it) and lists the call.
  const calc = report.messages.filter((m) => m.sender === 'calc');
  assert.equal(calc.length, 1, `${where} Calc answers "${THIRD}" once: ${JSON.stringify(calc)}`);
  const [reply] = calc;
  assert.equal(reply.kind, 'message', `${where} Calc's reply kind`);
  assert.equal(reply.content, TOOL_REPLY, `${where} the result reached the model`);
  assert.equal(report.toolRuns.length, 1, `${where} the tool ran once: ${JSON.stringify(report.toolRuns)}`);
  const [run] = report.toolRuns;
  assert.deepEqual({ a: run.a, b: run.b, agentName: run.agentName, messageId: run.messageId, signal: run.signal },
    { a: 6, b: 7, agentName: 'calc', messageId: reply.messageId, signal: true }, `${where} execute's arguments and context`);
  assert.deepEqual(reply.toolCalls, [{ toolCallId: run.toolCallId, toolName: 'multiply', args: { a: 6, b: 7 }, result: { product: 42 } }],
    `${where} the published toolCalls`);
  const events = report.sse.filter((e) => e.messageId === reply.messageId);
  const call = events.find((e) => e.type === 'tool-call');
  const result = events.find((e) => e.type === 'tool-result');
  assert.deepEqual([call?.toolCallId, call?.toolName, call?.args], [run.toolCallId, 'multiply', { a: 6, b: 7 }], `${where} SSE tool-call`);
  assert.deepEqual([result?.toolCallId, result?.result, result?.error], [run.toolCallId, { product: 42 }, undefined], `${where} SSE tool-result`);
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'start', `${where} ${types}`);
  assert.equal(types.at(-1), 'end', `${where} ${types}`);
  assert.ok(types.indexOf('tool-result') < types.indexOf('chunk'), `${where} the result before the answer's text: ${types}`);
  assert.equal(events.filter((e) => e.type === 'chunk').map((e) => e.content).join(''), TOOL_REPLY, `${where} chunks in order`);
}
