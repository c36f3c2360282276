// Drives the mock with plain fetch: every wire format, CORS, scripting, faults and observability.
// Run: node --test tests/mock-llm/

import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startMockLlm, estimateTokens } from './server.mjs';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));

let mock;
before(async () => {
  // No pauses between frames unless a test asks for them, so the suite stays fast.
  mock = await startMockLlm({ delayMs: 0 });
});
after(() => mock.close());
beforeEach(() => mock.reset());

const OPENAI = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };
const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

function post(path, body, headers = OPENAI, init = {}) {
  return fetch(mock.url + path, { method: 'POST', headers, body: JSON.stringify(body), ...init });
}

/** Split an SSE body into {event, data} records; accepts LF and CRLF line ends. */
function parseSse(text) {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const rec = { event: null, data: '' };
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event: ')) rec.event = line.slice(7);
        else if (line.startsWith('data: ')) rec.data += line.slice(6);
      }
      return rec;
    });
}

const openaiText = (records) =>
  records
    .filter((r) => r.data !== '[DONE]')
    .map((r) => JSON.parse(r.data).choices[0]?.delta?.content ?? '')
    .join('');

const chat = (content, extra = {}) => ({
  model: 'mock-alice',
  stream: true,
  messages: [{ role: 'user', content }],
  ...extra,
});

/** Poll requests() until pred holds; bounded so a broken mock fails instead of hanging. */
async function waitFor(pred, ms = 2000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const found = mock.requests().find(pred);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('timed out waiting for the mock request log');
}

/** Read a body stream into bytes, for at most `ms`; reports whether it ended or errored. */
async function readFor(res, ms) {
  const reader = res.body.getReader();
  const chunks = [];
  let outcome = 'timeout';
  const timer = new Promise((r) => setTimeout(() => r({ timeout: true }), ms));
  try {
    for (;;) {
      const step = await Promise.race([reader.read(), timer]);
      if (step.timeout) break;
      if (step.done) {
        outcome = 'done';
        break;
      }
      chunks.push(step.value);
    }
  } catch (err) {
    outcome = 'error';
  }
  if (outcome === 'timeout') await reader.cancel().catch(() => {});
  return { outcome, bytes: Buffer.concat(chunks) };
}

describe('OpenAI Chat Completions', () => {
  test('streams a role delta, content deltas, finish_reason, usage and [DONE]', async () => {
    const res = await post('/v1/chat/completions', chat('hi', { stream_options: { include_usage: true } }), {
      ...OPENAI,
      'x-mock-reply': encodeURIComponent('Hello there, Bob'),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const text = await res.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    const recs = parseSse(text);
    const chunks = recs.slice(0, -1).map((r) => JSON.parse(r.data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    assert.equal(chunks[0].object, 'chat.completion.chunk');
    assert.equal(openaiText(recs), 'Hello there, Bob');
    assert.ok(chunks.length > 4, 'one word per chunk by default');
    const finish = chunks.at(-2);
    assert.equal(finish.choices[0].finish_reason, 'stop');
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.completion_tokens, estimateTokens('Hello there, Bob'));
    assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + usage.usage.completion_tokens);
  });

  test('no usage chunk without stream_options.include_usage; /chat/completions also works', async () => {
    const recs = parseSse(await (await post('/chat/completions', chat('hi'))).text());
    const chunks = recs.slice(0, -1).map((r) => JSON.parse(r.data));
    assert.ok(chunks.every((c) => !('usage' in c)));
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  test('under /compat/ it is a keyless OpenAI-compatible server', async () => {
    const res = await post('/compat/v1/chat/completions', chat('hi'), { 'x-mock-reply': 'local' });
    assert.equal(res.status, 200);
    assert.equal(openaiText(parseSse(await res.text())), 'local');
    assert.equal(mock.requests()[0].provider, 'openai-compatible');
  });

  test('non-streaming JSON when stream is false', async () => {
    const res = await post('/v1/chat/completions', chat('hi', { stream: false }), { ...OPENAI, 'x-mock-reply': 'Plain' });
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const body = await res.json();
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.choices[0].message.content, 'Plain');
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(body.usage.completion_tokens, 2);
  });

  test('reasoning_content deltas come before content when scripted', async () => {
    const body = chat('hi');
    body.messages.unshift({ role: 'system', content: 'You are Alice.\nmock-reasoning: Let me think.\nmock-reply: Done.' });
    const recs = parseSse(await (await post('/v1/chat/completions', body)).text());
    const deltas = recs.slice(0, -1).map((r) => JSON.parse(r.data).choices[0].delta);
    const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('');
    assert.equal(reasoning, 'Let me think.');
    assert.equal(openaiText(recs), 'Done.');
    const firstContent = deltas.findIndex((d) => d.content);
    const lastReasoning = deltas.findLastIndex((d) => d.reasoning_content);
    assert.ok(lastReasoning < firstContent);
  });

  test('401 with the OpenAI error shape when no key is sent', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { 'content-type': 'application/json' });
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.error.code, 'invalid_api_key');
    assert.equal(typeof body.error.message, 'string');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  });
});

describe('Azure OpenAI', () => {
  const path = '/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21';
  test('streams the same frames with an api-key header; model defaults to the deployment', async () => {
    const res = await post(path, { stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'api-key': 'k', 'x-mock-reply': 'Azure ok' });
    assert.equal(res.status, 200);
    const recs = parseSse(await res.text());
    assert.equal(openaiText(recs), 'Azure ok');
    assert.equal(JSON.parse(recs[0].data).model, 'my-gpt');
    assert.equal(mock.requests()[0].provider, 'azure');
  });
  test('401 with the Azure error shape without a key', async () => {
    const res = await post(path, chat('hi'), {});
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.error.code, '401');
  });
});

describe('Anthropic Messages', () => {
  test('streams the documented event sequence', async () => {
    const res = await post('/v1/messages', { model: 'mock-bob', max_tokens: 100, stream: true, system: 'mock-reply: Hi Alice, good to see you.', messages: [{ role: 'user', content: 'hello' }] }, ANTHROPIC);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const recs = parseSse(await res.text());
    for (const r of recs) assert.equal(JSON.parse(r.data).type, r.event, 'event name matches data.type');
    const names = recs.map((r) => r.event);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    const text = recs
      .filter((r) => r.event === 'content_block_delta')
      .map((r) => JSON.parse(r.data).delta)
      .map((d) => (assert.equal(d.type, 'text_delta'), d.text))
      .join('');
    assert.equal(text, 'Hi Alice, good to see you.');
    const delta = JSON.parse(recs.at(-2).data);
    assert.equal(delta.delta.stop_reason, 'end_turn');
    assert.equal(delta.usage.output_tokens, estimateTokens(text));
  });

  test('a thinking block with thinking_delta precedes the text block when scripted', async () => {
    const res = await post('/v1/messages', { model: 'mock-bob', stream: true, system: [{ type: 'text', text: 'mock-reasoning: Hmm.\nmock-reply: Yes.' }], messages: [{ role: 'user', content: 'q' }] }, ANTHROPIC);
    const recs = parseSse(await res.text()).map((r) => JSON.parse(r.data));
    const starts = recs.filter((r) => r.type === 'content_block_start');
    assert.deepEqual(starts.map((s) => [s.index, s.content_block.type]), [[0, 'thinking'], [1, 'text']]);
    const thinking = recs.filter((r) => r.delta?.type === 'thinking_delta').map((r) => r.delta.thinking).join('');
    assert.equal(thinking, 'Hmm.');
  });

  test('non-streaming JSON, and errors in the Anthropic shape', async () => {
    const ok = await post('/v1/messages', { model: 'mock-bob', messages: [{ role: 'user', content: 'q' }] }, { ...ANTHROPIC, 'x-mock-reply': 'Sure.' });
    const body = await ok.json();
    assert.equal(body.type, 'message');
    assert.deepEqual(body.content, [{ type: 'text', text: 'Sure.' }]);
    assert.equal(body.stop_reason, 'end_turn');

    const noKey = await post('/v1/messages', { model: 'm', messages: [] }, { 'anthropic-version': '2023-06-01' });
    assert.equal(noKey.status, 401);
    assert.deepEqual(await noKey.json(), { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });

    const noVersion = await post('/v1/messages', { model: 'm', messages: [] }, { 'x-api-key': 'k' });
    assert.equal(noVersion.status, 400);
    assert.equal((await noVersion.json()).error.type, 'invalid_request_error');
  });
});

describe('Google Gemini', () => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'hello' }] }], systemInstruction: { parts: [{ text: 'mock-reply: Gemini says hi' }] } };

  test('streamGenerateContent?alt=sse: CRLF-framed responses, finishReason and usage on the last', async () => {
    const res = await post('/v1beta/models/mock-carol:streamGenerateContent?alt=sse', body, { 'x-goog-api-key': 'g' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const raw = await res.text();
    assert.ok(raw.includes('\r\n\r\n'));
    const objs = parseSse(raw).map((r) => JSON.parse(r.data));
    assert.equal(objs.map((o) => o.candidates[0].content.parts[0].text).join(''), 'Gemini says hi');
    assert.ok(objs.slice(0, -1).every((o) => !o.candidates[0].finishReason && !o.usageMetadata));
    assert.equal(objs.at(-1).candidates[0].finishReason, 'STOP');
    assert.equal(objs.at(-1).usageMetadata.candidatesTokenCount, estimateTokens('Gemini says hi'));
  });

  test('generateContent JSON with ?key=, and 401 in the Google shape without a key', async () => {
    const res = await post('/v1beta/models/mock-carol:generateContent?key=abc', body, {});
    const json = await res.json();
    assert.equal(json.candidates[0].content.parts[0].text, 'Gemini says hi');
    assert.equal(mock.requests()[0].path, '/v1beta/models/mock-carol:generateContent?key=***');

    const denied = await post('/v1beta/models/mock-carol:generateContent', body, {});
    assert.equal(denied.status, 401);
    assert.equal((await denied.json()).error.status, 'UNAUTHENTICATED');
  });
});

describe('Ollama', () => {
  test('streams NDJSON by default and ends with done:true and counts', async () => {
    const res = await post('/api/chat', { model: 'mock-dave', messages: [{ role: 'system', content: 'mock-reply: Local reply' }, { role: 'user', content: 'x' }] }, {});
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.slice(0, -1).every((l) => l.done === false && l.message.role === 'assistant'));
    assert.equal(lines.map((l) => l.message.content).join(''), 'Local reply');
    const last = lines.at(-1);
    assert.equal(last.done, true);
    assert.equal(last.done_reason, 'stop');
    assert.equal(last.eval_count, estimateTokens('Local reply'));
    assert.equal(typeof last.prompt_eval_count, 'number');
  });
  test('one JSON object when stream is false', async () => {
    const res = await post('/api/chat', { model: 'mock-dave', stream: false, messages: [{ role: 'user', content: 'x' }] }, { 'x-mock-reply': 'Whole' });
    const body = await res.json();
    assert.equal(body.message.content, 'Whole');
    assert.equal(body.done, true);
  });
});

describe('CORS', () => {
  test('preflight allows any origin, the requested headers and private network access', async () => {
    const res = await fetch(`${mock.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, anthropic-version, content-type, x-mock-fault',
        'access-control-request-private-network': 'true',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods'), /POST/);
    assert.equal(res.headers.get('access-control-allow-headers'), 'x-api-key, anthropic-version, content-type, x-mock-fault');
    assert.equal(res.headers.get('access-control-allow-private-network'), 'true');
    assert.match(res.headers.get('access-control-expose-headers'), /retry-after/);
    assert.equal(mock.requests().length, 0, 'preflights are not logged as calls');
  });
  test('streams, errors and 404s carry CORS headers too', async () => {
    for (const res of [
      await post('/v1/chat/completions', chat('hi')),
      await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'status:500' }),
      await post('/nowhere', {}),
    ]) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      await res.arrayBuffer();
    }
  });
});

describe('the /__mock/* endpoints are not for other sites', () => {
  // The log holds what the client sent; a web page the user happens to open must not read it,
  // nor reset it. Loopback pages (the demo, wasm-bindgen-test's runner, test pages on
  // 127.0.0.1 ports) may: the browser suites read the log from there.
  const EVIL = 'https://evil.example';
  test('no CORS headers for a foreign origin, on the log, the reset and their preflights', async () => {
    await (await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-reply': 'r' })).text();
    for (const [method, path, extra] of [
      ['GET', '/__mock/requests', {}],
      ['POST', '/__mock/reset', {}],
      ['GET', '/__mock/health', {}],
      ['OPTIONS', '/__mock/requests', { 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-anything' }],
      ['OPTIONS', '/__mock/reset', { 'access-control-request-method': 'POST' }],
    ]) {
      const res = await fetch(mock.url + path, { method, headers: { origin: EVIL, ...extra } });
      await res.arrayBuffer();
      for (const h of ['access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-private-network']) {
        assert.equal(res.headers.get(h), null, `${method} ${path} from ${EVIL} sends ${h}`);
      }
    }
    // The provider routes stay open to any origin: that is what a browser client needs.
    const call = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, origin: EVIL });
    await call.arrayBuffer();
    assert.equal(call.headers.get('access-control-allow-origin'), '*');
  });

  test('a loopback page may read the log (the browser suites do)', async () => {
    for (const origin of ['http://127.0.0.1:8000', 'http://localhost:5173', 'http://[::1]:4000']) {
      const res = await fetch(`${mock.url}/__mock/requests`, { headers: { origin } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), origin);
      assert.match(res.headers.get('vary') ?? '', /origin/i);
      assert.ok(Array.isArray(await res.json()));
    }
    for (const origin of ['http://127.0.0.1.evil.example', 'http://localhost.evil.example:80', 'null']) {
      const res = await fetch(`${mock.url}/__mock/requests`, { headers: { origin } });
      await res.arrayBuffer();
      assert.equal(res.headers.get('access-control-allow-origin'), null, origin);
    }
  });
});

describe('scripting', () => {
  test('default persona replies differ by model and are deterministic', async () => {
    const ask = async (model) => {
      const res = await post('/v1/chat/completions', { ...chat('What should we build today?'), model, stream: false });
      return (await res.json()).choices[0].message.content;
    };
    const alice = await ask('mock-alice');
    const bob = await ask('mock-bob');
    assert.match(alice, /^Alice here\. About "What should we build today\?": /);
    assert.match(bob, /^Bob here\. /);
    assert.notEqual(alice.replace('Alice', ''), bob.replace('Bob', ''));
    assert.equal(await ask('mock-alice'), alice);
    const sentences = alice.split(/(?<=[.?!])\s+(?=[A-Z])/).length;
    assert.ok(sentences >= 2 && sentences <= 4, alice);
    assert.ok(!/^\s*@/m.test(alice), 'persona replies mention nobody, so a demo does not loop');
  });

  test('mock-reply {n} counts earlier assistant messages, for ping-pong', async () => {
    const messages = [
      { role: 'system', content: 'mock-reply: @bob ping {n}' },
      { role: 'user', content: '@alice start' },
      { role: 'assistant', content: '@bob ping 1' },
      { role: 'user', content: '@alice pong 1' },
      { role: 'assistant', content: '@bob ping 2' },
      { role: 'user', content: '@alice pong 2' },
    ];
    const res = await post('/v1/chat/completions', { model: 'mock-alice', stream: false, messages });
    assert.equal((await res.json()).choices[0].message.content, '@bob ping 3');
  });

  test('several mock-reply lines script a sequence; \\n in a directive is a newline', async () => {
    const system = 'mock-reply: @bob first\nmock-reply: done\\n<world>pass</world>';
    const ask = async (messages) => (await (await post('/v1/messages', { model: 'm', system, messages }, ANTHROPIC)).json()).content[0].text;
    assert.equal(await ask([{ role: 'user', content: 'go' }]), '@bob first');
    assert.equal(await ask([{ role: 'user', content: 'go' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'again' }]), 'done\n<world>pass</world>');
  });

  test('headers win over directives: x-mock-reply (URI-encoded) and x-mock-script (JSON)', async () => {
    const body = chat('hi', { stream: false });
    body.messages.unshift({ role: 'system', content: 'mock-reply: from the prompt' });
    const viaReply = await post('/v1/chat/completions', body, { ...OPENAI, 'x-mock-reply': encodeURIComponent('Grüße, @bob!') });
    assert.equal((await viaReply.json()).choices[0].message.content, 'Grüße, @bob!');
    const script = JSON.stringify({ reply: 'scripted', reasoning: 'why', chunk: 3 });
    const viaScript = await post('/v1/chat/completions', { ...body, stream: true }, { ...OPENAI, 'x-mock-script': script });
    const deltas = parseSse(await viaScript.text()).slice(0, -1).map((r) => JSON.parse(r.data).choices[0].delta);
    assert.deepEqual(deltas.filter((d) => d.content).map((d) => d.content), ['scr', 'ipt', 'ed']);
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'why');
  });

  test('an unknown fault is a 400 that names it', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'explode' });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /unknown fault explode/);
    const an = await post('/v1/messages', { model: 'm', system: 'mock-fault: stall', messages: [] }, ANTHROPIC);
    assert.equal(an.status, 400);
    assert.match((await an.json()).error.message, /bad fault stall/);
    assert.equal(mock.requests()[1].status, 400);
  });
});

describe('faults', () => {
  test('status:<code>:<s> answers with the provider error shape and Retry-After', async () => {
    const oa = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'status:429:7' });
    assert.equal(oa.status, 429);
    assert.equal(oa.headers.get('retry-after'), '7');
    assert.equal((await oa.json()).error.code, 'rate_limit_exceeded');

    const an = await post('/v1/messages', { model: 'm', stream: true, system: 'mock-fault: status:529:2', messages: [] }, ANTHROPIC);
    assert.equal(an.status, 529);
    assert.equal(an.headers.get('retry-after'), '2');
    assert.equal((await an.json()).error.type, 'overloaded_error');

    const go = await post('/v1beta/models/m:streamGenerateContent?alt=sse', { contents: [] }, { 'x-goog-api-key': 'g', 'x-mock-fault': 'status:503' });
    assert.equal(go.status, 503);
    assert.equal(go.headers.get('retry-after'), null);
    assert.equal((await go.json()).error.status, 'UNAVAILABLE');

    const ol = await post('/api/chat', { model: 'm', messages: [] }, { 'x-mock-fault': 'status:500' });
    assert.equal(ol.status, 500);
    assert.equal(typeof (await ol.json()).error, 'string');
  });

  test('status-once fails the first request per key, then succeeds', async () => {
    const h = (key) => ({ ...OPENAI, 'x-mock-fault': 'status-once:503:1', 'x-mock-key': key, 'x-mock-reply': 'ok' });
    const first = await post('/v1/chat/completions', chat('hi'), h('a'));
    assert.equal(first.status, 503);
    assert.equal(first.headers.get('retry-after'), '1');
    await first.arrayBuffer();
    const second = await post('/v1/chat/completions', chat('hi'), h('a'));
    assert.equal(second.status, 200);
    assert.equal(openaiText(parseSse(await second.text())), 'ok');
    const other = await post('/v1/chat/completions', chat('hi'), h('b'));
    assert.equal(other.status, 503, 'another key fails once on its own');
    await other.arrayBuffer();

    // Keyed by the system prompt when no x-mock-key is sent.
    const body = chat('hi');
    body.messages.unshift({ role: 'system', content: 'agent one\nmock-fault: status-once:429' });
    assert.equal((await post('/v1/chat/completions', body)).status, 429);
    assert.equal((await post('/v1/chat/completions', body)).status, 200);
    mock.reset();
    assert.equal((await post('/v1/chat/completions', body)).status, 429, 'reset() forgets status-once');
  });

  test('stall:<bytes> sends exactly that many bytes, then keeps the connection open', async () => {
    const res = await post('/v1/chat/completions', chat('hello there'), { ...OPENAI, 'x-mock-fault': 'stall:100' });
    assert.equal(res.status, 200);
    const { outcome, bytes } = await readFor(res, 300);
    assert.equal(outcome, 'timeout');
    assert.equal(bytes.length, 100);
    const entry = await waitFor((r) => r.closedByClient);
    assert.equal(entry.bytesSent, 100);
    assert.equal(entry.completed, false);
  });

  test('cut:<bytes> destroys the socket after that many bytes', async () => {
    const res = await post('/v1/messages', { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }, { ...ANTHROPIC, 'x-mock-fault': 'cut:150' });
    const { outcome, bytes } = await readFor(res, 2000);
    assert.equal(outcome, 'error');
    assert.equal(bytes.length, 150);
    const entry = await waitFor((r) => r.bytesSent === 150);
    assert.equal(entry.closedByClient, false, 'the server cut it, not the client');
  });

  test('end:<bytes> ends the body cleanly after that many bytes; end-once only the first time per key', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'end:0', 'x-mock-reply': 'never sent' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const { outcome, bytes } = await readFor(res, 2000);
    assert.equal(outcome, 'done', 'a clean end, not a cut');
    assert.equal(bytes.length, 0);
    const entry = await waitFor((r) => r.completed);
    assert.equal(entry.closedByClient, false);

    const h = { ...OPENAI, 'x-mock-fault': 'end-once:0', 'x-mock-key': 'e1', 'x-mock-reply': 'second try' };
    assert.equal(await (await post('/v1/chat/completions', chat('hi'), h)).text(), '');
    assert.equal(openaiText(parseSse(await (await post('/v1/chat/completions', chat('hi'), h)).text())), 'second try');
  });

  test('stream-error sends the first content frame, the in-band error in the request format, then ends', async () => {
    const reply = { 'x-mock-reply': 'first second third' };
    const openai = parseSse(await (await post('/v1/chat/completions', chat('hi'), { ...OPENAI, ...reply, 'x-mock-fault': 'stream-error' })).text());
    assert.equal(openaiText(openai.slice(0, -1)), 'first');
    assert.deepEqual(JSON.parse(openai.at(-1).data).error, { message: 'mock fault: error in stream', type: 'server_error', param: null, code: null });

    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] };
    const anthropic = parseSse(await (await post('/v1/messages', body, { ...ANTHROPIC, ...reply, 'x-mock-fault': 'stream-error' })).text());
    const texts = anthropic.filter((r) => r.event === 'content_block_delta').map((r) => JSON.parse(r.data).delta.text);
    assert.deepEqual(texts, ['first']);
    assert.equal(anthropic.at(-1).event, 'error');
    assert.deepEqual(JSON.parse(anthropic.at(-1).data), { type: 'error', error: { type: 'api_error', message: 'mock fault: error in stream' } });

    const gBody = { contents: [{ role: 'user', parts: [{ text: 'x' }] }] };
    const google = parseSse(await (await post('/v1beta/models/m:streamGenerateContent?alt=sse', gBody, { 'x-goog-api-key': 'g', ...reply, 'x-mock-fault': 'stream-error' })).text());
    assert.equal(JSON.parse(google[0].data).candidates[0].content.parts[0].text, 'first');
    assert.deepEqual(JSON.parse(google.at(-1).data).error, { code: 500, message: 'mock fault: error in stream', status: 'INTERNAL' });
    const array = await (await post('/v1beta/models/m:streamGenerateContent', gBody, { 'x-goog-api-key': 'g', ...reply, 'x-mock-fault': 'stream-error' })).json();
    assert.equal(array.at(-1).error.status, 'INTERNAL', 'the JSON-array stream stays valid JSON');

    const ollama = (await (await post('/api/chat', { model: 'm', messages: [] }, { ...reply, 'x-mock-fault': 'stream-error' })).text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(ollama[0].message.content, 'first');
    assert.deepEqual(ollama.at(-1), { error: 'mock fault: error in stream' });
  });

  test('json-body answers a streaming request with the whole JSON reply', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'json-body', 'x-mock-reply': 'all at once' });
    assert.equal(res.headers.get('content-type'), 'application/json');
    const json = await res.json();
    assert.equal(json.object, 'chat.completion');
    assert.equal(json.choices[0].message.content, 'all at once');
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] };
    const msg = await (await post('/v1/messages', body, { ...ANTHROPIC, 'x-mock-fault': 'json-body', 'x-mock-reply': 'whole' })).json();
    assert.equal(msg.type, 'message');
    assert.equal(msg.content[0].text, 'whole');
  });

  test('malformed inserts one frame of invalid JSON into the stream', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'malformed', 'x-mock-reply': 'a b c' });
    const recs = parseSse(await res.text()).filter((r) => r.data !== '[DONE]');
    const bad = recs.filter((r) => {
      try {
        JSON.parse(r.data);
        return false;
      } catch {
        return true;
      }
    });
    assert.equal(bad.length, 1);

    const ndjson = await (await post('/api/chat', { model: 'm', messages: [] }, { 'x-mock-fault': 'malformed' })).text();
    assert.throws(() => ndjson.trim().split('\n').map((l) => JSON.parse(l)));

    const json = await post('/v1/chat/completions', chat('hi', { stream: false }), { ...OPENAI, 'x-mock-fault': 'malformed' });
    await assert.rejects(json.json());
  });

  test('drip:<ms> paces every chunk', async () => {
    const t0 = Date.now();
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'drip:60', 'x-mock-reply': 'one two three' });
    await res.text();
    // role + 3 words + finish + [DONE] = 6 frames, 5 pauses.
    assert.ok(Date.now() - t0 >= 5 * 60 - 20, `took ${Date.now() - t0} ms`);
  });

  test('huge:<bytes> replies with exactly that many bytes', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'huge:300000' });
    const text = openaiText(parseSse(await res.text()));
    assert.equal(Buffer.byteLength(text), 300000);
  });

  test('tokens:<n> streams exactly n one-word content chunks, with no pause', async () => {
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'tokens:1000' });
    const deltas = parseSse(await res.text())
      .filter((r) => r.data !== '[DONE]')
      .map((r) => JSON.parse(r.data).choices[0].delta.content)
      .filter((c) => c);
    assert.equal(deltas.length, 1000);
    assert.deepEqual([deltas[0], deltas[1], deltas[999]], ['tok', ' tok', ' tok']);
    assert.equal(deltas.join(''), `tok${' tok'.repeat(999)}`);

    // A scripted chunk size still wins; a count below 1 is a bad script (400, not retried).
    const big = await post('/v1/messages', { model: 'm', stream: true, messages: [] }, { ...ANTHROPIC, 'x-mock-fault': 'tokens:10', 'x-mock-chunk': '8' });
    const texts = parseSse(await big.text()).filter((r) => r.event === 'content_block_delta').map((r) => JSON.parse(r.data).delta.text);
    assert.deepEqual(texts, ['tok tok ', 'tok tok ', 'tok tok ', 'tok tok ', 'tok tok']);
    const bad = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-fault': 'tokens:0' });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /tokens:0/);
  });

  test('tokens:<n> ignores the server-wide chunk size', async () => {
    const chunky = await startMockLlm({ delayMs: 0, chunkChars: 100 });
    try {
      const res = await fetch(`${chunky.url}/api/chat`, { method: 'POST', headers: { 'x-mock-fault': 'tokens:5' }, body: JSON.stringify({ model: 'm', messages: [] }) });
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(lines.filter((l) => !l.done).map((l) => l.message.content), ['tok', ' tok', ' tok', ' tok', ' tok']);
    } finally {
      await chunky.close();
    }
  });

  test('empty replies with whitespace only', async () => {
    const res = await post('/v1beta/models/m:generateContent', { contents: [] }, { 'x-goog-api-key': 'g', 'x-mock-fault': 'empty' });
    const text = (await res.json()).candidates[0].content.parts[0].text;
    assert.ok(text.length > 0);
    assert.equal(text.trim(), '');
  });

  test('split:<bytes> writes the body in pieces of that size, cutting frames and characters', async () => {
    const reply = 'Grüße 🌍 von Alice';
    const res = await post('/v1/messages', { model: 'm', stream: true, messages: [] }, { ...ANTHROPIC, 'x-mock-fault': 'split:5', 'x-mock-delay': '1', 'x-mock-reply': encodeURIComponent(reply) });
    const reader = res.body.getReader();
    const pieces = [];
    for (let step = await reader.read(); !step.done; step = await reader.read()) pieces.push(step.value);
    const all = Buffer.concat(pieces);
    // The client may read two pieces at once when it falls behind, so only "many reads" is certain.
    assert.ok(pieces.length > 20, `${pieces.length} reads of ${all.length} bytes`);
    const text = parseSse(all.toString('utf8'))
      .filter((r) => r.event === 'content_block_delta')
      .map((r) => JSON.parse(r.data).delta.text)
      .join('');
    assert.equal(text, reply);
  });

  test('faults combine: status-once then a dripping reply', async () => {
    const h = { ...OPENAI, 'x-mock-fault': 'status-once:500, drip:1', 'x-mock-key': 'combo' };
    assert.equal((await post('/v1/chat/completions', chat('hi'), h)).status, 500);
    const ok = await post('/v1/chat/completions', chat('hi'), h);
    assert.equal(ok.status, 200);
    await ok.text();
  });
});

describe('observability', () => {
  test('an AbortController abort mid-stream shows as closedByClient and stops the stream', async () => {
    const ac = new AbortController();
    const res = await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-delay': '40', 'x-mock-fault': 'huge:2000', 'x-mock-chunk': '10' }, { signal: ac.signal });
    const reader = res.body.getReader();
    await reader.read();
    ac.abort();
    const entry = await waitFor((r) => r.closedByClient);
    assert.equal(entry.completed, false);
    const sent = entry.bytesSent;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mock.requests()[0].bytesSent, sent, 'no bytes are written after the abort');
    assert.ok(sent < 2000);
  });

  test('a finished stream is not closedByClient; requests are logged with keys redacted', async () => {
    await (await post('/v1/chat/completions', chat('hi'), { ...OPENAI, 'x-mock-reply': 'r' })).text();
    await (await post('/v1/messages', { model: 'm', messages: [] }, ANTHROPIC)).text();
    const [oa, an] = await Promise.all([waitFor((r) => r.id && r.provider === 'openai' && r.completed), waitFor((r) => r.provider === 'anthropic' && r.completed)]);
    assert.equal(oa.closedByClient, false);
    assert.equal(oa.headers.authorization, '***');
    assert.equal(an.headers['x-api-key'], '***');
    assert.equal(oa.path, '/v1/chat/completions');
    assert.equal(oa.body.messages[0].content, 'hi');
    assert.equal(oa.reply, 'r');
    assert.equal(typeof oa.startedAt, 'number');
    assert.ok(oa.bytesSent > 0);

    const viaHttp = await (await fetch(`${mock.url}/__mock/requests`)).json();
    assert.equal(viaHttp.length, 2);
    assert.equal(viaHttp[0].headers.authorization, '***');
    assert.equal((await fetch(`${mock.url}/__mock/reset`, { method: 'POST' })).status, 200);
    assert.equal(mock.requests().length, 0);
  });
});

test('the log shows only an allow-list of header values; every other value is redacted', async () => {
  const secrets = {
    'x-custom-token': 'custom-secret-1',
    cookie: 'session=cookie-secret-2',
    'proxy-authorization': 'Basic cHJveHktc2VjcmV0LTM=',
    'openai-organization': 'org-secret-4',
    'x-goog-user-project': 'project-secret-5',
  };
  await (await post('/v1/chat/completions', chat('hi'), {
    ...OPENAI, ...secrets, 'x-mock-key': 'run-42', 'x-mock-reply': 'r',
  })).text();
  const [entry] = mock.requests();
  const viaHttp = (await (await fetch(`${mock.url}/__mock/requests`)).json())[0];
  for (const logged of [entry, viaHttp]) {
    for (const name of Object.keys(secrets)) assert.equal(logged.headers[name], '***', name);
    assert.equal(logged.headers.authorization, '***');
    assert.doesNotMatch(JSON.stringify(logged), /secret|cHJveHkt|sk-test/);
    // What the tests read stays visible: the scripting headers and the plain HTTP ones.
    assert.equal(logged.headers['x-mock-key'], 'run-42');
    assert.equal(logged.headers['x-mock-reply'], 'r');
    assert.equal(logged.headers['content-type'], 'application/json');
    assert.match(logged.headers.host, /^127\.0\.0\.1:\d+$/);
  }
});

test('command line: prints one line, serves, and exits cleanly on SIGTERM', async () => {
  const child = spawn(process.execPath, [SERVER, '--port', '0', '--delay', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  try {
    const deadline = Date.now() + 5000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const m = out.match(/^mock-llm listening on (http:\/\/127\.0\.0\.1:\d+)\n$/);
    assert.ok(m, `unexpected output: ${JSON.stringify(out)}`);
    const res = await fetch(`${m[1]}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'mock-eve', stream: false, messages: [{ role: 'user', content: 'hi' }] }) });
    assert.match((await res.json()).message.content, /^Eve here\./);
  } finally {
    child.kill('SIGTERM');
  }
  assert.deepEqual(await exited, { code: 0, signal: null });
  assert.equal(out.split('\n').filter(Boolean).length, 1, 'nothing else is logged without --verbose');
});

test('model lists: each provider\'s shape, keys required where the provider needs one', async () => {
  const get = (path, headers = {}) => fetch(mock.url + path, { headers });
  const ids = ['mock-alice', 'mock-bob', 'mock-carol', 'mock-echo'];
  let r = await get('/v1/models', { authorization: 'Bearer sk-test' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.deepEqual((await r.json()).data.map((m) => m.id), ids);
  assert.equal((await get('/v1/models')).status, 401, 'OpenAI wants a key');
  r = await get('/compat/v1/models');
  assert.deepEqual((await r.json()).data.map((m) => m.id), ids, 'the keyless compatible route');
  r = await get('/v1/models', { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
  const anthropic = await r.json();
  assert.deepEqual(anthropic.data.map((m) => [m.type, m.id]), ids.map((id) => ['model', id]));
  assert.equal(anthropic.has_more, false);
  assert.equal((await get('/v1/models', { 'anthropic-version': '2023-06-01' })).status, 401);
  r = await get('/v1beta/models?key=k');
  assert.deepEqual((await r.json()).models.map((m) => m.name), ids.map((id) => `models/${id}`));
  assert.equal((await get('/v1beta/models')).status, 401);
  r = await get('/api/tags');
  assert.deepEqual((await r.json()).models.map((m) => m.name), ids);
  assert.deepEqual(await (await fetch(`${mock.url}/__mock/requests`)).json(), [], 'not logged');
});

describe('tools', () => {
  const TOOL_SYSTEM = 'mock-tool: get_weather {"city":"Oslo","unit":"celsius"}\nmock-tool: get_time {"tz":"Europe/Oslo"}';
  const OPENAI_TOOLS = [
    { type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: {} } } },
    { type: 'function', function: { name: 'get_time', description: 't', parameters: { type: 'object', properties: {} } } },
  ];
  const ANTHROPIC_TOOLS = [{ name: 'get_weather', input_schema: { type: 'object' } }, { name: 'get_time', input_schema: { type: 'object' } }];
  const GEMINI_TOOLS = [{ functionDeclarations: [{ name: 'get_weather' }, { name: 'get_time' }] }];
  const GOOGLE = { 'x-goog-api-key': 'g-key', 'content-type': 'application/json' };
  const openaiBody = (system, extra = {}) => ({
    model: 'mock-alice', stream: true, tools: OPENAI_TOOLS,
    messages: [{ role: 'system', content: system }, { role: 'user', content: 'weather and time?' }], ...extra,
  });
  const data = (text) => parseSse(text).filter((r) => r.data !== '[DONE]').map((r) => JSON.parse(r.data));

  test('OpenAI streams parallel calls as index-keyed deltas: id and name first, arguments in pieces', async () => {
    for (const [path, headers] of [
      ['/v1/chat/completions', OPENAI],
      ['/compat/v1/chat/completions', { 'content-type': 'application/json' }],
      ['/openai/deployments/dep/chat/completions?api-version=2024-10-21', { 'api-key': 'az', 'content-type': 'application/json' }],
    ]) {
      const res = await post(path, openaiBody(TOOL_SYSTEM), headers);
      assert.equal(res.status, 200, path);
      const chunks = data(await res.text());
      const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
      const byIndex = new Map();
      for (const d of deltas) {
        const e = byIndex.get(d.index) ?? { id: '', name: '', args: '', pieces: 0 };
        if (d.id) {
          assert.equal(e.id, '', 'the id comes once, on the first delta of the call');
          e.id = d.id;
          assert.equal(d.type, 'function');
        }
        e.name += d.function?.name ?? '';
        if (d.function?.arguments) e.pieces++;
        e.args += d.function?.arguments ?? '';
        byIndex.set(d.index, e);
      }
      assert.deepEqual([...byIndex.keys()], [0, 1], path);
      assert.equal(byIndex.get(0).name, 'get_weather');
      assert.deepEqual(JSON.parse(byIndex.get(0).args), { city: 'Oslo', unit: 'celsius' });
      assert.equal(byIndex.get(1).name, 'get_time');
      assert.deepEqual(JSON.parse(byIndex.get(1).args), { tz: 'Europe/Oslo' });
      assert.ok(byIndex.get(0).pieces > 1, 'arguments split over several chunks');
      assert.notEqual(byIndex.get(0).id, byIndex.get(1).id);
      assert.match(byIndex.get(0).id, /^call_/);
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
      assert.equal(openaiText(parseSse(await (await post(path, openaiBody(TOOL_SYSTEM), headers)).text())), '', 'no text with the calls');
    }
  });

  test('OpenAI non-streamed: message.tool_calls, content null, finish_reason tool_calls', async () => {
    const body = await (await post('/v1/chat/completions', openaiBody(TOOL_SYSTEM, { stream: false }))).json();
    const choice = body.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.deepEqual(choice.message.tool_calls.map((c) => [c.type, c.function.name, JSON.parse(c.function.arguments)]),
      [['function', 'get_weather', { city: 'Oslo', unit: 'celsius' }], ['function', 'get_time', { tz: 'Europe/Oslo' }]]);
  });

  test('once the request ends with the tool results, the reply is text that includes them', async () => {
    const history = [
      { role: 'system', content: TOOL_SYSTEM }, { role: 'user', content: 'weather and time?' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":7}' },
      { role: 'tool', tool_call_id: 'call_b', content: '"10:30"' },
    ];
    const res = await post('/v1/chat/completions', { model: 'm', stream: true, tools: OPENAI_TOOLS, messages: history });
    const records = parseSse(await res.text());
    assert.equal(openaiText(records), 'Tool results: get_weather: {"temp":7}; get_time: "10:30"');
    assert.equal(JSON.parse(records.at(-2).data).choices[0].finish_reason, 'stop');

    // mock-reply scripts the answer; {results} stands for the results.
    history[0].content = `${TOOL_SYSTEM}\nmock-reply: It is {results}.`;
    const whole = await (await post('/v1/chat/completions', { model: 'm', tools: OPENAI_TOOLS, messages: history })).json();
    assert.equal(whole.choices[0].message.content, 'It is get_weather: {"temp":7}; get_time: "10:30".');

    // Ollama names its results with tool_name.
    const ollama = await (await post('/api/chat', { model: 'm', stream: false, messages: [
      { role: 'system', content: 'mock-tool: get_weather {}' }, { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: {} } }] },
      { role: 'tool', tool_name: 'get_weather', content: 'sunny' }] }, {})).json();
    assert.equal(ollama.message.content, 'Tool results: get_weather: sunny');
  });

  test('a scripted tool the request does not offer is answered with text saying so', async () => {
    const res = await post('/v1/chat/completions', openaiBody(TOOL_SYSTEM, { stream: false, tools: [OPENAI_TOOLS[0]] }));
    const body = await res.json();
    assert.equal(body.choices[0].message.content, 'mock-llm: the tool get_time was not offered (offered: get_weather)');
    assert.equal(body.choices[0].message.tool_calls, undefined);
    const none = await (await post('/v1/chat/completions', openaiBody(TOOL_SYSTEM, { stream: false, tools: undefined }))).json();
    assert.equal(none.choices[0].message.content, 'mock-llm: the tools get_weather, get_time were not offered (offered: none)');
  });

  test('Anthropic streams tool_use blocks with input_json_delta fragments and stop_reason tool_use', async () => {
    const body = { model: 'm', max_tokens: 100, stream: true, system: `${TOOL_SYSTEM}\nmock-reasoning: need tools`, tools: ANTHROPIC_TOOLS, messages: [{ role: 'user', content: 'hi' }] };
    const events = parseSse(await (await post('/v1/messages', body, ANTHROPIC)).text()).map((r) => ({ event: r.event, ...JSON.parse(r.data) }));
    const starts = events.filter((e) => e.type === 'content_block_start');
    assert.deepEqual(starts.map((s) => s.content_block.type), ['thinking', 'tool_use', 'tool_use']);
    const calls = starts.slice(1).map((s) => {
      const parts = events.filter((e) => e.type === 'content_block_delta' && e.index === s.index).map((e) => e.delta);
      assert.ok(parts.every((p) => p.type === 'input_json_delta'));
      assert.equal(parts[0].partial_json, '', 'the first fragment is empty, as the API sends it');
      assert.ok(parts.length > 2);
      assert.ok(events.some((e) => e.type === 'content_block_stop' && e.index === s.index));
      assert.deepEqual(s.content_block.input, {});
      assert.match(s.content_block.id, /^toolu_/);
      return [s.content_block.name, JSON.parse(parts.map((p) => p.partial_json).join(''))];
    });
    assert.deepEqual(calls, [['get_weather', { city: 'Oslo', unit: 'celsius' }], ['get_time', { tz: 'Europe/Oslo' }]]);
    assert.equal(events.find((e) => e.type === 'message_delta').delta.stop_reason, 'tool_use');
    assert.equal(events.at(-1).type, 'message_stop');

    const whole = await (await post('/v1/messages', { ...body, stream: false }, ANTHROPIC)).json();
    assert.equal(whole.stop_reason, 'tool_use');
    assert.deepEqual(whole.content.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]),
      [['get_weather', { city: 'Oslo', unit: 'celsius' }], ['get_time', { tz: 'Europe/Oslo' }]]);

    // The results come back as tool_result blocks of the next user turn.
    const ids = whole.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const next = await (await post('/v1/messages', { ...body, stream: false, messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: whole.content },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: ids[0], content: '{"temp":7}' },
        { type: 'tool_result', tool_use_id: ids[1], content: [{ type: 'text', text: '10:30' }] }] }] }, ANTHROPIC)).json();
    assert.equal(next.stop_reason, 'end_turn');
    assert.equal(next.content.at(-1).text, 'Tool results: get_weather: {"temp":7}; get_time: 10:30');
  });

  test('Gemini sends functionCall parts whole (finishReason STOP), streamed and not; functionResponse gets the text', async () => {
    const body = { systemInstruction: { parts: [{ text: TOOL_SYSTEM }] }, tools: GEMINI_TOOLS, contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
    const events = parseSse(await (await post('/v1beta/models/m:streamGenerateContent?alt=sse', body, GOOGLE)).text()).map((r) => JSON.parse(r.data));
    const parts = events.flatMap((e) => e.candidates[0].content.parts);
    assert.deepEqual(parts, [{ functionCall: { name: 'get_weather', args: { city: 'Oslo', unit: 'celsius' } } }, { functionCall: { name: 'get_time', args: { tz: 'Europe/Oslo' } } }]);
    assert.equal(events.at(-1).candidates[0].finishReason, 'STOP');
    const whole = await (await post('/v1beta/models/m:generateContent', body, GOOGLE)).json();
    assert.deepEqual(whole.candidates[0].content.parts, parts);
    const next = await (await post('/v1beta/models/m:generateContent', { ...body, contents: [
      ...body.contents, { role: 'model', parts }, { role: 'user', parts: [
        { functionResponse: { name: 'get_weather', response: { temp: 7 } } }, { functionResponse: { name: 'get_time', response: { result: '10:30' } } }] }] }, GOOGLE)).json();
    assert.equal(next.candidates[0].content.parts[0].text, 'Tool results: get_weather: {"temp":7}; get_time: {"result":"10:30"}');
  });

  test('Ollama streams tool_calls whole in one line, then the done line', async () => {
    const body = { model: 'm', tools: OPENAI_TOOLS, messages: [{ role: 'system', content: TOOL_SYSTEM }, { role: 'user', content: 'hi' }] };
    const lines = (await (await post('/api/chat', body, {})).text()).trim().split('\n').map((l) => JSON.parse(l));
    const withCalls = lines.filter((l) => l.message.tool_calls);
    assert.equal(withCalls.length, 1);
    assert.equal(withCalls[0].done, false);
    assert.deepEqual(withCalls[0].message.tool_calls, [{ function: { name: 'get_weather', arguments: { city: 'Oslo', unit: 'celsius' } } }, { function: { name: 'get_time', arguments: { tz: 'Europe/Oslo' } } }]);
    assert.equal(lines.at(-1).done, true);
    assert.equal(lines.at(-1).done_reason, 'stop');
    const whole = await (await post('/api/chat', { ...body, stream: false }, {})).json();
    assert.deepEqual(whole.message.tool_calls, withCalls[0].message.tool_calls);
  });

  test('mock-tool-malformed sends the arguments text verbatim in every format', async () => {
    const raw = '{"city": "Os';
    const system = `mock-tool-malformed: get_weather ${raw}`;
    const openai = data(await (await post('/v1/chat/completions', openaiBody(system))).text());
    assert.equal(openai.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((d) => d.function.arguments ?? '').join(''), raw);
    const anth = parseSse(await (await post('/v1/messages', { model: 'm', stream: true, system, tools: ANTHROPIC_TOOLS, messages: [{ role: 'user', content: 'hi' }] }, ANTHROPIC)).text())
      .map((r) => JSON.parse(r.data)).filter((e) => e.delta?.type === 'input_json_delta');
    assert.equal(anth.map((e) => e.delta.partial_json).join(''), raw);
    const gem = await (await post('/v1beta/models/m:generateContent', { systemInstruction: { parts: [{ text: system }] }, tools: GEMINI_TOOLS, contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, GOOGLE)).json();
    assert.deepEqual(gem.candidates[0].content.parts, [{ functionCall: { name: 'get_weather', args: raw } }]);
    const oll = await (await post('/api/chat', { model: 'm', stream: false, tools: OPENAI_TOOLS, messages: [{ role: 'system', content: system }, { role: 'user', content: 'hi' }] }, {})).json();
    assert.deepEqual(oll.message.tool_calls, [{ function: { name: 'get_weather', arguments: raw } }]);
  });

  test('headers script tools too: x-mock-tool (URI-encoded lines) and x-mock-script tools; a bad mock-tool is a 400', async () => {
    const viaHeader = await (await post('/v1/chat/completions', openaiBody('', { stream: false }),
      { ...OPENAI, 'x-mock-tool': encodeURIComponent('get_time {"tz":"UTC"}\nmalformed get_weather {oops') })).json();
    assert.deepEqual(viaHeader.choices[0].message.tool_calls.map((c) => [c.function.name, c.function.arguments]),
      [['get_time', '{"tz":"UTC"}'], ['get_weather', '{oops']]);
    const viaScript = await (await post('/v1/chat/completions', openaiBody('', { stream: false }),
      { ...OPENAI, 'x-mock-script': JSON.stringify({ tools: [{ name: 'get_weather', arguments: { city: 'Rome' } }] }) })).json();
    assert.deepEqual(JSON.parse(viaScript.choices[0].message.tool_calls[0].function.arguments), { city: 'Rome' });
    const bad = await post('/v1/chat/completions', openaiBody('mock-tool: get_weather {not json', { stream: false }));
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /mock-tool-malformed/);
  });
});
