// The assertions of the provider × runtime matrix, applied by every runner to the report that
// tests/runtimes/scenario.mjs returned in its runtime. One place, so every runtime is held to
// exactly the same checks. Node-only (runs in the node:test runner, not in the runtime).
import assert from 'node:assert/strict';
import { FAULTS, PROVIDERS } from './scenario.mjs';

const where = (c) => `[${c.provider} ${c.name}]`;

function replies(c) {
  return c.messages.filter((m) => m.sender === c.agentId);
}
function sseTypes(c) {
  return c.sse.map((e) => e.type);
}
function noFailure(c) {
  assert.equal(c.failure, undefined, `${where(c)} the case did not finish: ${c.failure}`);
}
function oneError(c, code) {
  const codes = c.errors.map((e) => e.code);
  assert.deepEqual(codes, [code], `${where(c)} expected one system error ${code}, got ${JSON.stringify(c.errors)}`);
  const sseErr = c.sse.filter((e) => e.type === 'error');
  assert.equal(sseErr.length, 1, `${where(c)} expected one SSE error, got ${JSON.stringify(c.sse)}`);
  assert.equal(c.sse[0]?.type, 'start', `${where(c)} SSE starts with start`);
  return { system: c.errors[0], sse: sseErr[0] };
}
function requestCount(c, n, why) {
  assert.equal(c.requests.length, n, `${where(c)} ${why}: ${JSON.stringify(c.requests)}`);
}
function closedByClient(c) {
  assert.ok(c.requests.some((r) => r.closedByClient === true),
    `${where(c)} the mock never saw the client close the connection: ${JSON.stringify(c.requests)}`);
}

/** A normal streamed reply: start, ≥ 2 chunks in order, end; the message is the scripted text. */
function assertReply(c, expected, { minChunks = 2 } = {}) {
  noFailure(c);
  assert.deepEqual(c.errors, [], `${where(c)} unexpected system errors`);
  const types = sseTypes(c).filter((t) => t !== 'reasoning');
  assert.equal(types[0], 'start', `${where(c)} SSE: ${types}`);
  assert.equal(types.at(-1), 'end', `${where(c)} SSE: ${types}`);
  assert.ok(types.slice(1, -1).every((t) => t === 'chunk'), `${where(c)} SSE: ${types}`);
  const chunks = c.sse.filter((e) => e.type === 'chunk');
  assert.ok(chunks.length >= minChunks, `${where(c)} only ${chunks.length} chunk(s): not streamed`);
  const ids = new Set(c.sse.map((e) => e.messageId));
  assert.equal(ids.size, 1, `${where(c)} SSE events of one reply share its messageId`);
  assert.ok(c.sse.every((e) => e.agentName === c.agentId), `${where(c)} agentName`);
  if (!chunks.some((e) => e.contentLength)) {
    assert.equal(chunks.map((e) => e.content).join(''), expected, `${where(c)} chunks in order`);
  }
  const mine = replies(c);
  assert.equal(mine.length, 1, `${where(c)} one published reply, got ${JSON.stringify(c.messages)}`);
  assert.equal(mine[0].kind, 'message');
  assert.equal(mine[0].messageId, [...ids][0], `${where(c)} the message has the streamed id`);
  if (mine[0].contentLength === undefined) assert.equal(mine[0].content, expected, `${where(c)} published text`);
  return mine[0];
}

function assertRecovered(c) {
  const r = c.recovery;
  assert.ok(r, `${where(c)} no recovery run`);
  assertReply({ ...r, name: `recover after ${c.name}` }, r.expected, { minChunks: 2 });
}

const CHECKS = {
  stream(c, report) {
    assertReply(c, report.text);
    if (c.requests) requestCount(c, 1, 'one request');
  },
  reasoning(c) {
    const reply = assertReply(c, 'the answer is 4');
    const reasoning = c.sse.filter((e) => e.type === 'reasoning');
    assert.ok(reasoning.length >= 1, `${where(c)} no SSE reasoning`);
    assert.equal(reasoning.map((e) => e.content).join(''), 'two plus two makes four', `${where(c)} reasoning text`);
    assert.ok(!reply.content.includes('two plus two'), `${where(c)} reasoning leaked into the reply`);
    const firstChunk = sseTypes(c).indexOf('chunk');
    assert.ok(sseTypes(c).lastIndexOf('reasoning') < firstChunk, `${where(c)} reasoning streams before the reply`);
  },
  retry503(c) {
    assertReply(c, 'second time lucky');
    requestCount(c, 2, 'a 503 then a successful retry');
    assert.deepEqual(c.requests.map((r) => r.status), [503, 200], `${where(c)} statuses`);
  },
  status401(c) {
    noFailure(c);
    const { system } = oneError(c, 'llm_error');
    assert.match(system.message, /HTTP 401/, `${where(c)} message`);
    assert.deepEqual(replies(c), [], `${where(c)} nothing published`);
    requestCount(c, 1, 'a 401 is never retried');
  },
  huge(c) {
    const msg = assertReply(c, null);
    const text = hugeText(200_000);
    assert.equal(msg.contentLength, text.length, `${where(c)} the whole huge reply`);
    assert.equal(msg.contentSum, checksum(text), `${where(c)} the huge reply's content`);
  },
  malformed(c) {
    noFailure(c);
    const { system } = oneError(c, 'llm_error');
    assert.match(system.message, /malformed/, `${where(c)} message`);
    requestCount(c, 1, 'a malformed stream is not retried after output');
  },
  cut(c) {
    noFailure(c);
    const { sse } = oneError(c, 'llm_error');
    assert.ok(sse.partialContent && sse.partialContent.length > 0, `${where(c)} partialContent`);
    const chunks = c.sse.filter((e) => e.type === 'chunk').map((e) => e.content).join('');
    assert.equal(sse.partialContent, chunks, `${where(c)} partialContent is what streamed`);
    const mine = replies(c);
    assert.equal(mine.length, 1, `${where(c)} an interrupted message: ${JSON.stringify(c.messages)}`);
    assert.equal(mine[0].kind, 'interrupted');
    assert.equal(mine[0].content, sse.partialContent);
    requestCount(c, 1, 'a cut after output is not retried');
  },
  stall(c) {
    noFailure(c);
    const { system } = oneError(c, 'llm_stalled');
    assert.match(system.message, /no data for/, `${where(c)} message`);
    closedByClient(c);
  },
  timeout(c) {
    noFailure(c);
    const { system } = oneError(c, 'llm_timeout');
    assert.match(system.message, /no complete reply within/, `${where(c)} message`);
    closedByClient(c);
  },
  empty(c) {
    noFailure(c);
    assert.deepEqual(c.errors.map((e) => e.code), ['llm_empty_response'], `${where(c)} errors`);
    assert.deepEqual(replies(c), [], `${where(c)} nothing published`);
  },
  stop(c) {
    noFailure(c);
    const { sse } = oneError(c, 'llm_aborted');
    assert.match(sse.error, /cancelled/, `${where(c)} SSE error`);
    assert.ok(sse.partialContent, `${where(c)} partialContent after the first chunk`);
    if (c.provider === 'custom') {
      assert.equal(c.custom.signalAborted, true, `${where(c)} the provider's signal aborted`);
      assert.equal(c.custom.finished, true, `${where(c)} the generator was ended`);
    } else {
      closedByClient(c);
      requestCount(c, 1, 'no retry after a stop');
    }
  },
};

/** Applies every check to `report`; `runtime` names the runtime in messages. */
export function assertReport(report, runtime) {
  assert.ok(report && Array.isArray(report.cases), `${runtime}: no report`);
  const failures = [];
  for (const provider of PROVIDERS) {
    for (const name of ['stream', ...FAULTS[provider]]) {
      const c = report.cases.find((x) => x.provider === provider && x.name === name);
      try {
        assert.ok(c, `[${provider} ${name}] missing from the report ` +
          JSON.stringify(report.cases.filter((x) => x.provider === provider && x.failure)));
        CHECKS[name](c, report);
        if (name !== 'stream') assertRecovered(c);
      } catch (e) {
        failures.push(`${runtime} ${e.message}`);
      }
    }
  }
  assert.deepEqual(failures, [], `${failures.length} matrix cell(s) failed in ${runtime}:\n${failures.join('\n')}`);
}

// The mock's `huge` text (tests/mock-llm/server.mjs hugeText) and the scenario's checksum.
function hugeText(bytes) {
  const unit = 'lorem ipsum dolor sit amet ';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}
function checksum(content) {
  let sum = 0;
  for (let i = 0; i < content.length; i++) sum = (sum * 31 + content.charCodeAt(i)) >>> 0;
  return sum;
}
