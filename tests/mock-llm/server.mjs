#!/usr/bin/env node
// Mock LLM server: speaks the streaming wire formats of OpenAI (and xAI / OpenAI-compatible),
// Azure OpenAI, Anthropic, Google Gemini and Ollama, with scripted replies and injectable faults.
// Node built-ins only, so the demo, browser tests and benchmarks run with no key and no network.
// The scripting and fault reference is README.md beside this file.

import http from 'node:http';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';

const DEFAULT_DELAY_MS = 15;
// A huge reply in one-word chunks would be hundreds of thousands of frames: use big chunks.
const HUGE_CHUNK_CHARS = 4096;
// The request log shows these headers' values; every other value is '***' (keys, cookies,
// custom provider headers: anything a client may have put a secret in).
const LOGGED_HEADERS = new Set(['host', 'connection', 'content-type', 'content-length', 'accept',
  'accept-encoding', 'accept-language', 'user-agent', 'origin', 'anthropic-version']);
// The mock's own scripting headers (README "Scripting"): tests filter the log by x-mock-key.
const isScriptHeader = (name) => name.startsWith('x-mock-');

/** Rough token estimate (1 token ≈ 4 characters, at least 1); exported so tests can predict usage. */
export const estimateTokens = (text) => Math.max(1, Math.ceil(String(text).length / 4));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Start the mock LLM server.
 *
 * @param {object} [options]
 * @param {number} [options.port=0] TCP port; 0 picks a free one.
 * @param {string} [options.host='127.0.0.1'] Interface to bind (keep it on loopback).
 * @param {number} [options.delayMs=15] Default pause before each streamed frame (0 for benchmarks).
 * @param {number} [options.chunkChars=0] Default chunk size in characters; 0 means one word per chunk.
 * @param {boolean} [options.requireKey=true] Answer 401 when a provider that needs a key gets none.
 * @param {boolean} [options.verbose=false] Log one line per request to stdout.
 * @returns {Promise<{url: string, port: number, close: () => Promise<void>,
 *   requests: () => Array<object>, reset: () => void}>}
 */
export async function startMockLlm({
  port = 0,
  host = '127.0.0.1',
  delayMs = DEFAULT_DELAY_MS,
  chunkChars = 0,
  requireKey = true,
  verbose = false,
} = {}) {
  const state = { log: [], failedOnce: new Set(), seq: 0 };
  const defaults = { delayMs, chunkChars, requireKey, verbose };
  const server = http.createServer((req, res) => {
    handle(req, res, state, defaults).catch((err) => {
      // A bug in the mock must show up in the test, not hang it.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `mock-llm: ${err.message}` } });
      else res.destroy();
    });
  });
  server.listen(port, host);
  await once(server, 'listening');
  const actual = server.address().port;
  return {
    url: `http://${host}:${actual}`,
    port: actual,
    requests: () => structuredClone(state.log),
    reset: () => resetState(state),
    close: async () => {
      state.closing = true;
      const closed = new Promise((resolve) => server.close(() => resolve()));
      // Stalled streams never end by themselves.
      server.closeAllConnections();
      await closed;
    },
  };
}

function resetState(state) {
  state.log.length = 0;
  state.failedOnce.clear();
}

// ---------------------------------------------------------------------------------------------
// Routing

function corsHeaders(req) {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    // Echo what the preflight asked for: `*` does not cover Authorization.
    'access-control-allow-headers':
      req.headers['access-control-request-headers'] ||
      'authorization, content-type, x-api-key, api-key, x-goog-api-key, anthropic-version',
    'access-control-allow-private-network': 'true',
    'access-control-expose-headers': 'retry-after, x-request-id, request-id',
    'access-control-max-age': '600',
  };
}

// A page on 127.0.0.1, localhost or [::1], any port (the demo, wasm-bindgen-test's runner).
const LOOPBACK_ORIGIN = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

/**
 * The /__mock/* endpoints (the request log, reset) are for tests, not for any web page the
 * user happens to open: CORS only for loopback origins, echoed (never `*`), so a foreign site
 * can neither read the log nor reset it through the browser.
 */
function controlCorsHeaders(req) {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !LOOPBACK_ORIGIN.test(origin)) return { vary: 'Origin' };
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': req.headers['access-control-request-headers'] || 'content-type',
    'access-control-allow-private-network': 'true',
    'access-control-max-age': '600',
    vary: 'Origin',
  };
}

function route(method, pathname) {
  if (method !== 'POST') return null;
  let m;
  if ((m = pathname.match(/^\/openai\/deployments\/([^/]+)\/chat\/completions$/)))
    return { provider: 'azure', deployment: decodeURIComponent(m[1]) };
  // A keyless local server (LM Studio, vLLM, llama.cpp): the same wire format, no key needed.
  if (pathname.startsWith('/compat/') && pathname.endsWith('/chat/completions')) return { provider: 'openai-compatible' };
  // Any OpenAI-style base URL (`/v1`, `/api/v1`, none) ends in /chat/completions.
  if (pathname.endsWith('/chat/completions')) return { provider: 'openai' };
  if (pathname === '/v1/messages' || pathname === '/messages') return { provider: 'anthropic' };
  if ((m = pathname.match(/^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent)$/)))
    return { provider: 'google', model: decodeURIComponent(m[1]), stream: m[2] === 'streamGenerateContent' };
  if (pathname === '/api/chat') return { provider: 'ollama' };
  return null;
}

// The model lists a UI offers in its model picker (README "Model lists"). Not logged: the
// request log is for chat calls.
export const MOCK_MODELS = ['mock-alice', 'mock-bob', 'mock-carol', 'mock-echo'];

/** GET routes that list models, in each provider's shape, or null. `/v1/models` is both
 * OpenAI's and Anthropic's: an `anthropic-version` header makes it Anthropic's. */
function listRoute(method, pathname, headers) {
  if (method !== 'GET') return null;
  if (pathname === '/api/tags') return 'ollama';
  if (/^\/v1(?:beta|alpha)\/models$/.test(pathname)) return 'google';
  if (pathname === '/v1/models' && headers['anthropic-version']) return 'anthropic';
  if (pathname.startsWith('/compat/') && pathname.endsWith('/models')) return 'openai-compatible';
  if (pathname.endsWith('/models')) return 'openai';
  return null;
}

function sendModelList(req, res, url, provider, defaults) {
  const h = req.headers;
  const keyed = {
    openai: () => /^Bearer \S/.test(h.authorization ?? ''),
    anthropic: () => !!h['x-api-key'],
    google: () => !!(h['x-goog-api-key'] || url.searchParams.get('key')),
  }[provider];
  if (keyed && defaults.requireKey && !keyed()) {
    const message = 'mock-llm: missing API key';
    const body = provider === 'anthropic'
      ? { type: 'error', error: { type: 'authentication_error', message } }
      : provider === 'google' ? { error: { code: 401, message, status: 'UNAUTHENTICATED' } }
        : { error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } };
    return sendJson(res, 401, body);
  }
  const created = 1_700_000_000;
  const body = {
    openai: () => ({ object: 'list', data: MOCK_MODELS.map((id) => ({ id, object: 'model', created, owned_by: 'mock-llm' })) }),
    'openai-compatible': () => ({ object: 'list', data: MOCK_MODELS.map((id) => ({ id, object: 'model', created, owned_by: 'mock-llm' })) }),
    anthropic: () => ({
      data: MOCK_MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: '2024-01-01T00:00:00Z' })),
      has_more: false, first_id: MOCK_MODELS[0], last_id: MOCK_MODELS.at(-1),
    }),
    google: () => ({
      models: MOCK_MODELS.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent', 'streamGenerateContent'] })),
    }),
    ollama: () => ({ models: MOCK_MODELS.map((id) => ({ name: id, model: id, modified_at: '2024-01-01T00:00:00Z', size: 0 })) }),
  }[provider]();
  return sendJson(res, 200, body);
}

async function handle(req, res, state, defaults) {
  const url = new URL(req.url, 'http://mock');
  const cors = url.pathname.startsWith('/__mock/') ? controlCorsHeaders(req) : corsHeaders(req);
  for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);

  if (req.method === 'OPTIONS') {
    res.writeHead(204).end();
    return;
  }
  if (url.pathname === '/__mock/requests' && req.method === 'GET') return sendJson(res, 200, state.log);
  if (url.pathname === '/__mock/reset' && req.method === 'POST') {
    resetState(state);
    return sendJson(res, 200, { ok: true });
  }
  if (url.pathname === '/__mock/health' || (url.pathname === '/' && req.method === 'GET'))
    return sendJson(res, 200, { ok: true, name: 'mock-llm' });

  const list = listRoute(req.method, url.pathname, req.headers);
  if (list) return sendModelList(req, res, url, list, defaults);

  const target = route(req.method, url.pathname);
  const raw = await readBody(req);
  if (!target) return sendJson(res, 404, { error: { message: `mock-llm: no route for ${req.method} ${url.pathname}` } });

  const entry = {
    id: ++state.seq,
    provider: target.provider,
    method: req.method,
    path: redactQuery(url),
    headers: redactHeaders(req.headers),
    body: parseJson(raw) ?? raw,
    startedAt: Date.now(),
    status: null,
    reply: null,
    fault: null,
    bytesSent: 0,
    completed: false,
    closedByClient: false,
  };
  state.log.push(entry);
  const ctx = { req, res, entry, closed: false, serverCut: false, state };
  res.on('close', () => {
    ctx.closed = true;
    entry.completed = res.writableFinished;
    // Closed before our last byte and not by us (cut fault, shutdown): the client went away.
    entry.closedByClient = !res.writableFinished && !ctx.serverCut && !state.closing;
    if (defaults.verbose) {
      const how = entry.completed ? 'done' : entry.closedByClient ? 'closed by client' : 'closed by server';
      console.log(`${req.method} ${entry.path} ${entry.provider} ${entry.status} ${entry.bytesSent} B ${how}${entry.fault ? ` fault=${entry.fault}` : ''}`);
    }
  });

  const codec = CODECS[target.provider];
  const body = parseJson(raw);
  if (body === undefined || typeof body !== 'object' || body === null) {
    return sendError(ctx, codec, 400, 'request body is not valid JSON');
  }
  const auth = codec.auth(req, url);
  if (auth && defaults.requireKey) return sendError(ctx, codec, auth.status, auth.message);

  const call = codec.parse(body, target, url);
  let plan;
  try {
    plan = makePlan(call, req.headers, defaults);
  } catch (err) {
    // A bad script (unknown fault) is the caller's error: 400, which clients do not retry.
    if (err.status === 400) return sendError(ctx, codec, 400, `mock-llm: ${err.message}`);
    throw err;
  }
  entry.reply = plan.reply;
  entry.fault = plan.faults.map((f) => f.raw).join(', ') || null;

  // Status faults answer before any stream starts, as real rate limits and outages do.
  for (const f of plan.faults) {
    if (f.kind === 'status' || f.kind === 'status-once') {
      const onceKey = `${f.code}|${plan.key}`;
      if (f.kind === 'status-once') {
        if (state.failedOnce.has(onceKey)) continue;
        state.failedOnce.add(onceKey);
      }
      const extra = f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {};
      return sendError(ctx, codec, f.code, `mock fault: HTTP ${f.code}`, extra);
    }
  }

  // `end-once` ends only the first body with this key, like `status-once`.
  for (const f of plan.faults) {
    if (f.kind !== 'end-once') continue;
    const onceKey = `end|${plan.key}`;
    if (!state.failedOnce.has(onceKey)) {
      state.failedOnce.add(onceKey);
      plan.endAt = f.bytes;
    }
  }
  // `json-body`: a streaming request answered with the whole JSON reply, as some proxies do.
  const streamed = call.stream && !plan.jsonBody;
  const out = streamed ? codec.stream(call, plan) : codec.json(call, plan);
  if (plan.streamError && streamed) {
    // The first content frame, then the provider's in-band error event, then the body ends
    // (what LiteLLM sends when the upstream fails mid-reply).
    out.frames = [...out.frames.slice(0, out.malformedAt), ...codec.errorFrames(call, 500, 'mock fault: error in stream')];
  }
  if (plan.malformed && streamed) out.frames.splice(out.malformedAt, 0, out.malformedFrame);
  else if (plan.malformed) {
    // A whole JSON body cut in half; its length header must match what is sent.
    out.frames = [out.malformedFrame];
    out.headers = { ...out.headers, 'content-length': String(Buffer.byteLength(out.malformedFrame)) };
  }
  // Re-cut the body into fixed byte pieces, across frames and inside UTF-8 characters, to test
  // that a client's parser accepts any split of the byte stream.
  if (plan.splitBytes) {
    const all = Buffer.concat(out.frames.map((f) => Buffer.from(f)));
    out.frames = [];
    for (let i = 0; i < all.length; i += plan.splitBytes) out.frames.push(all.subarray(i, i + plan.splitBytes));
  }
  entry.status = 200;
  res.writeHead(200, { 'x-request-id': `req_mock_${entry.id}`, ...out.headers });
  res.flushHeaders();
  await writeFrames(ctx, out.frames, streamed ? plan.delayMs : 0, plan);
}

// ---------------------------------------------------------------------------------------------
// Scripting: decide the reply, its chunking, timing and faults for one request.

function parseDirectives(system) {
  const d = { replies: [] };
  for (const line of String(system || '').split(/\r?\n/)) {
    // `mock-tool:` lines are kept verbatim: `\n` inside their JSON is an escape, not a newline.
    const t = line.match(/^\s*mock-tool(-malformed)?\s*:\s?(.*)$/i);
    if (t) {
      (d.tools ??= []).push(parseToolSpec(t[2].trim(), !!t[1]));
      continue;
    }
    const m = line.match(/^\s*mock-(reply|reasoning|chunk|delay|fault|key)\s*:\s?(.*)$/i);
    if (!m) continue;
    // `\n` in a directive stands for a newline, so one line can script a multi-line reply.
    const value = m[2].replace(/\s+$/, '').replace(/\\n/g, '\n');
    const name = m[1].toLowerCase();
    if (name === 'reply') d.replies.push(value);
    else if (d[name] === undefined) d[name] = value;
  }
  return d;
}

/**
 * One scripted tool call: `name {"json": "object"}` (arguments optional, `{}` when absent), or
 * with `malformed` the arguments text sent verbatim whatever it is (`name {"city": "Os`).
 */
function parseToolSpec(spec, malformed) {
  const m = String(spec).match(/^([A-Za-z0-9_.-]+)\s*([\s\S]*)$/);
  if (!m) throw scriptError(`bad mock-tool "${spec}": needs a tool name, then its arguments as a JSON object`);
  const [, name, rest] = m;
  if (malformed) return { name, arguments: rest, malformed: true };
  const args = rest.trim() === '' ? {} : parseJson(rest);
  if (!args || typeof args !== 'object' || Array.isArray(args))
    throw scriptError(`bad mock-tool "${spec}": the arguments must be a JSON object (use mock-tool-malformed for broken ones)`);
  return { name, arguments: JSON.stringify(args), args, malformed: false };
}

/** Tool calls scripted by `x-mock-script` `tools: [{name, arguments}]` (an object, or a string
 * sent verbatim: malformed) or the `x-mock-tool` header (URI-encoded, one `name {args}` per line). */
function scriptedTools(headers, s, d) {
  if (Array.isArray(s.tools)) {
    return s.tools.map((t) => {
      if (!t || typeof t.name !== 'string') throw scriptError('bad x-mock-script tools: each needs a name');
      if (typeof t.arguments === 'string') return { name: t.name, arguments: t.arguments, malformed: true };
      return parseToolSpec(`${t.name} ${JSON.stringify(t.arguments ?? {})}`, false);
    });
  }
  if (headers['x-mock-tool']) {
    return safeDecode(headers['x-mock-tool']).split(/\r?\n/).filter((l) => l.trim())
      .map((l) => {
        const mal = l.match(/^\s*malformed\s+([\s\S]*)$/i);
        return mal ? parseToolSpec(mal[1].trim(), true) : parseToolSpec(l.trim(), false);
      });
  }
  return d.tools ?? [];
}

function headerScript(headers) {
  const raw = headers['x-mock-script'];
  if (!raw) return {};
  const parsed = parseJson(raw) ?? parseJson(safeDecode(raw));
  return parsed && typeof parsed === 'object' ? parsed : {};
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function makePlan(call, headers, defaults) {
  const d = parseDirectives(call.system);
  const s = headerScript(headers);
  const n = call.messages.filter((m) => m.role === 'assistant').length + 1;
  const pick = (...values) => values.find((v) => v !== undefined && v !== null && v !== '');
  const num = (v) => (v === undefined ? undefined : Number(v));

  let reply = pick(
    headers['x-mock-reply'] !== undefined ? safeDecode(headers['x-mock-reply']) : undefined,
    s.reply,
    // Several `mock-reply:` lines script a sequence: reply n uses line n, the last one repeats.
    d.replies.length ? d.replies[Math.min(n, d.replies.length) - 1] : undefined,
  );
  // An explicitly scripted empty header reply is still a scripted reply.
  if (reply === undefined && headers['x-mock-reply'] === '') reply = '';
  // Tools (README "Tools"): call the scripted tools, or answer with their results once the
  // request carries them, or say that a scripted tool was not offered.
  const tools = scriptedTools(headers, s, d);
  const results = call.results ?? [];
  const resultsText = results.map((r) => `${r.name || r.id}: ${r.content}`).join('; ');
  let toolCalls = null;
  if (tools.length && results.length) {
    reply ??= 'Tool results: {results}';
  } else if (tools.length) {
    const offered = call.offered ?? [];
    const missing = [...new Set(tools.map((t) => t.name).filter((name) => !offered.includes(name)))];
    if (missing.length) {
      reply = `mock-llm: the ${missing.length > 1 ? 'tools' : 'tool'} ${missing.join(', ')} ${missing.length > 1 ? 'were' : 'was'} not offered (offered: ${offered.join(', ') || 'none'})`;
    } else {
      toolCalls = tools.map((t, i) => ({ ...t, id: `${fnv1a(`${call.model}|${t.name}|${t.arguments}|${i}`).toString(16)}${i}` }));
      reply = '';
    }
  }
  reply = reply === undefined ? persona(call) : String(reply).replaceAll('{n}', String(n)).replaceAll('{results}', resultsText);

  let reasoning = pick(
    headers['x-mock-reasoning'] !== undefined ? safeDecode(headers['x-mock-reasoning']) : undefined,
    s.reasoning,
    d.reasoning,
  );
  reasoning = reasoning === undefined ? '' : String(reasoning).replaceAll('{n}', String(n));

  const faultSpec = [d.fault, s.fault, headers['x-mock-fault']].filter(Boolean).join(',');
  const faults = parseFaults(faultSpec);
  let delayMs = num(pick(headers['x-mock-delay'], s.delay, d.delay));
  let chunkChars = num(pick(headers['x-mock-chunk'], s.chunk, d.chunk));
  const plan = { reply, reasoning, toolCalls, faults, malformed: false, stallAt: undefined, cutAt: undefined };
  for (const f of faults) {
    if (f.kind === 'stall') plan.stallAt = f.bytes;
    else if (f.kind === 'cut') plan.cutAt = f.bytes;
    else if (f.kind === 'end') plan.endAt = f.bytes;
    else if (f.kind === 'stream-error') plan.streamError = true;
    else if (f.kind === 'json-body') plan.jsonBody = true;
    else if (f.kind === 'malformed') plan.malformed = true;
    else if (f.kind === 'drip') delayMs = f.ms;
    else if (f.kind === 'split') plan.splitBytes = f.bytes;
    else if (f.kind === 'empty') plan.reply = ' \n  ';
    else if (f.kind === 'huge') {
      plan.reply = hugeText(f.bytes);
      chunkChars ??= HUGE_CHUNK_CHARS;
      delayMs ??= 0;
    } else if (f.kind === 'tokens') {
      // Benchmarks: exactly n one-word chunks (`tok`, ` tok`, …) as fast as the socket takes them.
      plan.reply = tokensText(f.count);
      plan.wordChunks = chunkChars === undefined;
      delayMs ??= 0;
    }
  }
  plan.delayMs = Number.isFinite(delayMs) && delayMs >= 0 ? delayMs : defaults.delayMs;
  plan.chunkChars = Number.isFinite(chunkChars) && chunkChars > 0 ? chunkChars : plan.wordChunks ? 0 : defaults.chunkChars;
  plan.key = pick(headers['x-mock-key'], s.key, d.key, call.system) ?? '';
  plan.replyChunks = chunkText(plan.reply, plan.chunkChars);
  plan.reasoningChunks = chunkText(plan.reasoning, plan.chunkChars);
  plan.inputTokens = estimateTokens([call.system, ...call.messages.map((m) => m.text)].join('\n'));
  plan.outputTokens = estimateTokens(plan.toolCalls ? plan.toolCalls.map((t) => t.name + t.arguments).join('') : plan.reply);
  // Streamed tool arguments arrive in small pieces, as the providers send them.
  plan.argChunks = (t) => chunkText(t.arguments, plan.chunkChars > 0 ? plan.chunkChars : 6);
  plan.reasoningTokens = plan.reasoning ? estimateTokens(plan.reasoning) : 0;
  return plan;
}

function scriptError(message) {
  return Object.assign(new Error(message), { status: 400 });
}

function parseFaults(spec) {
  const faults = [];
  for (const raw of String(spec).split(',').map((x) => x.trim()).filter(Boolean)) {
    const [kind, a, b] = raw.split(':').map((x) => x.trim());
    const f = { raw, kind: kind.toLowerCase() };
    if (f.kind === 'status' || f.kind === 'status-once') {
      f.code = Number(a);
      if (b !== undefined && b !== '') f.retryAfter = Number(b);
      if (!(f.code >= 400 && f.code <= 599)) throw scriptError(`bad fault ${raw}: status must be 400..599`);
    } else if (['stall', 'cut', 'end', 'end-once', 'huge', 'split'].includes(f.kind)) {
      f.bytes = Number(a);
      if (!(f.bytes >= (f.kind === 'split' ? 1 : 0))) throw scriptError(`bad fault ${raw}: needs a byte count`);
    } else if (f.kind === 'tokens') {
      f.count = Number(a);
      if (!(Number.isInteger(f.count) && f.count >= 1)) throw scriptError(`bad fault ${raw}: needs a token count of at least 1`);
    } else if (f.kind === 'drip') {
      f.ms = Number(a);
      if (!(f.ms >= 0)) throw scriptError(`bad fault ${raw}: needs milliseconds`);
    } else if (!['malformed', 'empty', 'stream-error', 'json-body'].includes(f.kind)) {
      throw scriptError(`unknown fault ${raw}`);
    }
    faults.push(f);
  }
  return faults;
}

/** Split text into chunks that concatenate back to it: n characters each, or one word each. */
function chunkText(text, n) {
  if (!text) return [];
  if (n > 0) {
    const chars = Array.from(text); // never split a surrogate pair
    const out = [];
    for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(''));
    return out;
  }
  // Leading whitespace travels with the word after it, as tokenizers do (" world").
  const parts = text.match(/\s*\S+/g) || [];
  const tail = text.slice(parts.join('').length);
  if (tail) parts.length ? (parts[parts.length - 1] += tail) : parts.push(tail);
  return parts;
}

function hugeText(bytes) {
  const unit = 'lorem ipsum dolor sit amet ';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** n one-word tokens that word-chunking splits back into exactly n chunks. */
function tokensText(n) {
  return `tok${' tok'.repeat(n - 1)}`;
}

const OPENERS = [
  'Good question.',
  'I have a view on that.',
  'Let me weigh in.',
  'Happy to help with this.',
];
const THOUGHTS = [
  'I would start small and check the result before going further.',
  'The simplest next step is to write down what we already know.',
  'There are two sides to this, and the trade-off is worth naming first.',
  'Breaking it into smaller parts usually makes it clearer.',
  'I am not fully convinced yet, but it is worth a try.',
  'Keeping it concrete will help the others follow along.',
];

function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The default reply: deterministic in the model name and the last user message. */
function persona(call) {
  const base = String(call.model || 'mock').split('/').pop().replace(/:.*$/, '').replace(/^mock[-_]?/i, '') || 'mock';
  const name = base.charAt(0).toUpperCase() + base.slice(1);
  const last = [...call.messages].reverse().find((m) => m.role === 'user');
  const h = fnv1a(`${call.model}\n${last ? last.text : ''}`);
  const opener = OPENERS[h % OPENERS.length];
  const t1 = THOUGHTS[(h >>> 8) % THOUGHTS.length];
  const t2 = THOUGHTS[((h >>> 8) + 1 + ((h >>> 16) % (THOUGHTS.length - 1))) % THOUGHTS.length];
  if (!last || !last.text.trim()) return `${name} here. ${opener} ${t1}`;
  const flat = last.text.replace(/\s+/g, ' ').trim();
  const quote = Array.from(flat).length > 60 ? `${Array.from(flat).slice(0, 60).join('')}…` : flat;
  return `${name} here. About "${quote}": ${t1} ${t2}`;
}

// ---------------------------------------------------------------------------------------------
// Codecs: each provider's auth check, request reading, and response frames.

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const JSON_HEADERS = { 'content-type': 'application/json' };

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => (typeof p === 'string' ? p : p && typeof p.text === 'string' ? p.text : '')).join('');
  if (content && typeof content.text === 'string') return content.text;
  return '';
}

/** OpenAI-style messages → {system, messages}: the first system/developer message is the system prompt. */
function splitOpenAiMessages(list) {
  let system = '';
  const messages = [];
  for (const m of Array.isArray(list) ? list : []) {
    const role = m && m.role;
    if ((role === 'system' || role === 'developer') && !system) system = textOf(m.content);
    else if (role === 'assistant' || role === 'user') messages.push({ role, text: textOf(m.content) });
  }
  return { system, messages };
}

// ---- Tools in requests: which tools are offered, and the results the request ends with.

const names = (list, pick) => (Array.isArray(list) ? list.map(pick).filter((x) => typeof x === 'string') : []);

/** OpenAI / Ollama: the trailing `role: "tool"` messages, named from the assistant's calls
 * (OpenAI results carry only `tool_call_id`; Ollama's carry `tool_name`). */
function openAiResults(list) {
  const msgs = Array.isArray(list) ? list : [];
  const out = [];
  for (let i = msgs.length - 1; i >= 0 && msgs[i] && msgs[i].role === 'tool'; i--) {
    const m = msgs[i];
    const id = m.tool_call_id ?? '';
    let name = m.tool_name ?? m.name ?? '';
    if (!name && id) {
      for (const a of msgs) for (const c of (a && a.tool_calls) || []) if (c && c.id === id) name = c.function?.name ?? '';
    }
    out.unshift({ id, name, content: textOf(m.content) });
  }
  return out;
}

/** Anthropic: the `tool_result` blocks of the last message (a user turn). */
function anthropicResults(list) {
  const last = Array.isArray(list) ? list.at(-1) : null;
  if (!last || last.role !== 'user' || !Array.isArray(last.content)) return [];
  const uses = new Map();
  for (const m of list) if (m && Array.isArray(m.content)) for (const b of m.content) if (b && b.type === 'tool_use') uses.set(b.id, b.name);
  return last.content.filter((b) => b && b.type === 'tool_result')
    .map((b) => ({ id: b.tool_use_id ?? '', name: uses.get(b.tool_use_id) ?? '', content: textOf(b.content) }));
}

/** Gemini: the `functionResponse` parts of the last content. */
function geminiResults(contents) {
  const last = Array.isArray(contents) ? contents.at(-1) : null;
  if (!last || !Array.isArray(last.parts)) return [];
  return last.parts.filter((p) => p && p.functionResponse)
    .map((p) => ({ id: p.functionResponse.id ?? '', name: p.functionResponse.name ?? '', content: JSON.stringify(p.functionResponse.response ?? null) }));
}

const openaiErrorType = (status) =>
  status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';

function openaiCodec(azure) {
  return {
    name: azure ? 'azure' : 'openai',
    auth(req, url) {
      if (azure) {
        if (!url.searchParams.get('api-version')) return { status: 404, message: 'Resource not found' };
        const key = req.headers['api-key'] || bearer(req);
        return key ? null : { status: 401, message: 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.' };
      }
      return bearer(req) ? null : { status: 401, message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)." };
    },
    parse(body, target) {
      const { system, messages } = splitOpenAiMessages(body.messages);
      return {
        model: body.model || target.deployment || 'mock',
        stream: body.stream === true,
        includeUsage: !!(body.stream_options && body.stream_options.include_usage),
        system,
        messages,
        offered: names(body.tools, (t) => t && t.function && t.function.name),
        results: openAiResults(body.messages),
      };
    },
    errorBody(status, message) {
      if (azure) return { error: { code: String(status), message } };
      return { error: { message, type: openaiErrorType(status), param: null, code: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : null } };
    },
    errorFrames(call, status, message) {
      return [sse(this.errorBody(status, message))];
    },
    stream(call, plan) {
      const id = `chatcmpl-mock${fnv1a(plan.reply + call.model).toString(16)}`;
      const created = Math.floor(Date.now() / 1000);
      const usageField = call.includeUsage ? { usage: null } : {};
      const chunk = (delta, finish = null) =>
        sse({ id, object: 'chat.completion.chunk', created, model: call.model, system_fingerprint: 'fp_mock', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...usageField });
      const frames = [chunk({ role: 'assistant', content: plan.toolCalls ? null : '', refusal: null })];
      for (const r of plan.reasoningChunks) frames.push(chunk({ reasoning_content: r }));
      for (const t of plan.replyChunks) frames.push(chunk({ content: t }));
      // Tool calls as OpenAI streams them: per call, a first delta with its index, id, type and
      // name (empty arguments), then argument fragments keyed by the index alone.
      (plan.toolCalls ?? []).forEach((c, index) => {
        frames.push(chunk({ tool_calls: [{ index, id: `call_${c.id}`, type: 'function', function: { name: c.name, arguments: '' } }] }));
        for (const a of plan.argChunks(c)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: a } }] }));
      });
      frames.push(chunk({}, plan.toolCalls ? 'tool_calls' : 'stop'));
      if (call.includeUsage) {
        frames.push(sse({ id, object: 'chat.completion.chunk', created, model: call.model, system_fingerprint: 'fp_mock', choices: [], usage: openaiUsage(plan) }));
      }
      frames.push('data: [DONE]\n\n');
      return {
        headers: SSE_HEADERS,
        frames,
        // After the role frame, the reasoning and the first content delta.
        malformedAt: Math.min(2 + plan.reasoningChunks.length, frames.length - 1),
        malformedFrame: `data: {"id":"${id}","object":"chat.completion.chunk","choices":[{"delta":{"content":"oops"}\n\n`,
      };
    },
    json(call, plan) {
      const message = { role: 'assistant', content: plan.toolCalls ? null : plan.reply, refusal: null };
      if (plan.reasoning) message.reasoning_content = plan.reasoning;
      if (plan.toolCalls) {
        message.tool_calls = plan.toolCalls.map((c) => ({ id: `call_${c.id}`, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      }
      const body = {
        id: `chatcmpl-mock${fnv1a(plan.reply + call.model).toString(16)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: call.model,
        system_fingerprint: 'fp_mock',
        choices: [{ index: 0, message, logprobs: null, finish_reason: plan.toolCalls ? 'tool_calls' : 'stop' }],
        usage: openaiUsage(plan),
      };
      return jsonOut(body);
    },
  };
}

function openaiUsage(plan) {
  const completion = plan.outputTokens + plan.reasoningTokens;
  return {
    prompt_tokens: plan.inputTokens,
    completion_tokens: completion,
    total_tokens: plan.inputTokens + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: plan.reasoningTokens },
  };
}

const ANTHROPIC_ERROR_TYPES = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 529: 'overloaded_error' };

const anthropicCodec = {
  name: 'anthropic',
  auth(req) {
    if (!req.headers['x-api-key'] && !bearer(req)) return { status: 401, message: 'x-api-key header is required' };
    if (!req.headers['anthropic-version']) return { status: 400, message: 'anthropic-version: header is required' };
    return null;
  },
  parse(body) {
    const messages = (Array.isArray(body.messages) ? body.messages : [])
      .filter((m) => m && (m.role === 'user' || m.role === 'assistant'))
      .map((m) => ({ role: m.role, text: textOf(m.content) }));
    return {
      model: body.model || 'mock', stream: body.stream === true, system: textOf(body.system), messages,
      offered: names(body.tools, (t) => t && t.name),
      results: anthropicResults(body.messages),
    };
  },
  errorBody(status, message) {
    return { type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[status] || 'api_error', message } };
  },
  errorFrames(call, status, message) {
    return [`event: error\ndata: ${JSON.stringify(this.errorBody(status, message))}\n\n`];
  },
  stream(call, plan) {
    const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const id = `msg_mock${fnv1a(plan.reply + call.model).toString(16)}`;
    const frames = [
      ev('message_start', { message: { id, type: 'message', role: 'assistant', model: call.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: plan.inputTokens, output_tokens: 1 } } }),
    ];
    let index = 0;
    if (plan.reasoning) {
      frames.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      frames.push(ev('ping', {}));
      for (const r of plan.reasoningChunks) frames.push(ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: r } }));
      frames.push(ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'mock-signature' } }));
      frames.push(ev('content_block_stop', { index }));
      index++;
    }
    let firstText = frames.length;
    if (plan.toolCalls) {
      // Each call is a `tool_use` block (empty `input`) whose JSON arrives in `input_json_delta`
      // fragments, the first one empty, as the API streams them.
      if (!plan.reasoning) frames.push(ev('ping', {}));
      for (const c of plan.toolCalls) {
        frames.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${c.id}`, name: c.name, input: {} } }));
        for (const a of ['', ...plan.argChunks(c)]) frames.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: a } }));
        frames.push(ev('content_block_stop', { index }));
        index++;
      }
    } else {
      frames.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      if (!plan.reasoning) frames.push(ev('ping', {}));
      firstText = frames.length;
      for (const t of plan.replyChunks) frames.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text: t } }));
      frames.push(ev('content_block_stop', { index }));
    }
    frames.push(ev('message_delta', { delta: { stop_reason: plan.toolCalls ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: plan.outputTokens + plan.reasoningTokens } }));
    frames.push(ev('message_stop', {}));
    return {
      headers: SSE_HEADERS,
      frames,
      malformedAt: firstText + 1,
      malformedFrame: 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n',
    };
  },
  json(call, plan) {
    const content = [];
    if (plan.reasoning) content.push({ type: 'thinking', thinking: plan.reasoning, signature: 'mock-signature' });
    if (plan.toolCalls) {
      // Malformed arguments cannot be an object: the raw text goes in `input` as a string.
      for (const c of plan.toolCalls) content.push({ type: 'tool_use', id: `toolu_${c.id}`, name: c.name, input: c.malformed ? c.arguments : c.args });
    } else content.push({ type: 'text', text: plan.reply });
    return jsonOut({
      id: `msg_mock${fnv1a(plan.reply + call.model).toString(16)}`,
      type: 'message',
      role: 'assistant',
      model: call.model,
      content,
      stop_reason: plan.toolCalls ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: plan.inputTokens, output_tokens: plan.outputTokens + plan.reasoningTokens },
    });
  },
};

const GOOGLE_STATUS = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED', 429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 501: 'UNIMPLEMENTED', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

const googleCodec = {
  name: 'google',
  auth(req, url) {
    if (req.headers['x-goog-api-key'] || url.searchParams.get('key')) return null;
    return { status: 401, message: 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.' };
  },
  parse(body, target, url) {
    const sys = body.systemInstruction || body.system_instruction;
    const messages = (Array.isArray(body.contents) ? body.contents : []).map((c) => ({
      role: c && c.role === 'model' ? 'assistant' : 'user',
      text: textOf(c && c.parts),
    }));
    const declarations = (Array.isArray(body.tools) ? body.tools : []).flatMap((t) => (t && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : []));
    return {
      model: target.model, stream: target.stream, sse: url.searchParams.get('alt') === 'sse', system: sys ? textOf(sys.parts ?? sys) : '', messages,
      offered: names(declarations, (f) => f && f.name),
      results: geminiResults(body.contents),
    };
  },
  errorBody(status, message) {
    return { error: { code: status, message, status: GOOGLE_STATUS[status] || (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } };
  },
  errorFrames(call, status, message) {
    const error = JSON.stringify(this.errorBody(status, message));
    return call.sse ? [`data: ${error}\r\n\r\n`] : [`,\r\n${error}`, ']'];
  },
  usage(plan) {
    const u = { promptTokenCount: plan.inputTokens, candidatesTokenCount: plan.outputTokens, totalTokenCount: plan.inputTokens + plan.outputTokens + plan.reasoningTokens };
    if (plan.reasoningTokens) u.thoughtsTokenCount = plan.reasoningTokens;
    return u;
  },
  response(call, plan, parts, last) {
    const candidate = { content: { parts, role: 'model' }, index: 0 };
    if (last) candidate.finishReason = 'STOP';
    const r = { candidates: [candidate] };
    if (last) r.usageMetadata = this.usage(plan);
    r.modelVersion = call.model;
    r.responseId = `mock${fnv1a(plan.reply + call.model).toString(16)}`;
    return r;
  },
  stream(call, plan) {
    const pieces = [
      ...plan.reasoningChunks.map((text) => [{ text, thought: true }]),
      ...plan.replyChunks.map((text) => [{ text }]),
    ];
    // Gemini sends function calls whole, parallel ones as parts of one response.
    if (plan.toolCalls) pieces.push(this.callParts(plan));
    if (!pieces.length) pieces.push([{ text: '' }]);
    const objects = pieces.map((p, i) => this.response(call, plan, p, i === pieces.length - 1));
    const firstText = Math.min(plan.reasoningChunks.length + 1, objects.length);
    if (call.sse) {
      // Google's servers end SSE events with CRLF pairs; clients must cope, so the mock does too.
      return {
        headers: SSE_HEADERS,
        frames: objects.map((o) => `data: ${JSON.stringify(o)}\r\n\r\n`),
        malformedAt: firstText,
        malformedFrame: 'data: {"candidates":[{"content":\r\n\r\n',
      };
    }
    // Without alt=sse the stream is one JSON array, sent element by element.
    const frames = objects.map((o, i) => `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(o)}`);
    frames.push(']');
    return { headers: JSON_HEADERS, frames, malformedAt: firstText, malformedFrame: ',\r\n{"candidates":[' };
  },
  /** `functionCall` parts (Gemini's finish reason stays `STOP`); malformed arguments, which
   * Gemini's protobuf `Struct` cannot carry, are sent as a JSON string. */
  callParts(plan) {
    return plan.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.malformed ? c.arguments : c.args } }));
  },
  json(call, plan) {
    const parts = [];
    if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
    if (plan.toolCalls) parts.push(...this.callParts(plan));
    else parts.push({ text: plan.reply });
    return jsonOut(this.response(call, plan, parts, true));
  },
};

const ollamaCodec = {
  name: 'ollama',
  auth: () => null, // a local Ollama needs no key
  parse(body) {
    const { system, messages } = splitOpenAiMessages(body.messages);
    // Ollama streams unless told `stream: false`.
    return {
      model: body.model || 'mock', stream: body.stream !== false, system, messages,
      offered: names(body.tools, (t) => t && t.function && t.function.name),
      results: openAiResults(body.messages),
    };
  },
  errorBody: (status, message) => ({ error: message }),
  errorFrames: (call, status, message) => [`${JSON.stringify({ error: message })}\n`],
  /** Ollama's `tool_calls`: `{function: {name, arguments}}` with the arguments an object
   * (malformed ones, which Ollama would not send, as a string). */
  calls(plan) {
    return plan.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.malformed ? c.arguments : c.args } }));
  },
  final(call, plan, content, whole = false) {
    return {
      model: call.model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content, ...(plan.reasoning && whole ? { thinking: plan.reasoning } : {}), ...(plan.toolCalls && whole ? { tool_calls: this.calls(plan) } : {}) },
      done_reason: 'stop',
      done: true,
      total_duration: 1_000_000 * (plan.outputTokens + 10),
      load_duration: 1_000_000,
      prompt_eval_count: plan.inputTokens,
      prompt_eval_duration: 1_000_000,
      eval_count: plan.outputTokens + plan.reasoningTokens,
      eval_duration: 1_000_000 * plan.outputTokens,
    };
  },
  stream(call, plan) {
    const line = (message) => `${JSON.stringify({ model: call.model, created_at: new Date().toISOString(), message: { role: 'assistant', ...message }, done: false })}\n`;
    const frames = [
      ...plan.reasoningChunks.map((thinking) => line({ content: '', thinking })),
      ...plan.replyChunks.map((content) => line({ content })),
      // Ollama streams the calls whole, in one line before the final one.
      ...(plan.toolCalls ? [line({ content: '', tool_calls: this.calls(plan) })] : []),
    ];
    const malformedAt = Math.min(plan.reasoningChunks.length + 1, frames.length);
    frames.push(`${JSON.stringify(this.final(call, plan, ''))}\n`);
    return {
      headers: { 'content-type': 'application/x-ndjson' },
      frames,
      malformedAt,
      malformedFrame: `{"model":${JSON.stringify(call.model)},"message":{"role":"assistant","content":\n`,
    };
  },
  json(call, plan) {
    return jsonOut(this.final(call, plan, plan.reply, true));
  },
};

const CODECS = {
  openai: openaiCodec(false),
  'openai-compatible': { ...openaiCodec(false), name: 'openai-compatible', auth: () => null },
  azure: openaiCodec(true), anthropic: anthropicCodec, google: googleCodec, ollama: ollamaCodec };

function jsonOut(body) {
  const text = JSON.stringify(body);
  return {
    headers: { ...JSON_HEADERS, 'content-length': String(Buffer.byteLength(text)) },
    frames: [text],
    malformedAt: 0,
    // A JSON body cut short: the client's JSON.parse must fail.
    malformedFrame: text.slice(0, Math.max(1, Math.floor(text.length / 2))),
  };
}

function sse(obj) {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

// ---------------------------------------------------------------------------------------------
// Transport helpers

function bearer(req) {
  const m = String(req.headers.authorization || '').match(/^Bearer\s+(\S.*)$/i);
  return m ? m[1].trim() : '';
}

function sendJson(res, status, body, extra = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': String(Buffer.byteLength(text)), ...extra });
  res.end(text);
}

function sendError(ctx, codec, status, message, extra = {}) {
  ctx.entry.status = status;
  const text = JSON.stringify(codec.errorBody(status, message));
  ctx.entry.bytesSent = Buffer.byteLength(text);
  const idHeader = codec.name === 'anthropic' ? 'request-id' : 'x-request-id';
  sendJson(ctx.res, status, JSON.parse(text), { [idHeader]: `req_mock_${ctx.entry.id}`, ...extra });
}

/** Write frames with a pause before each (after the first), honouring stall/cut byte budgets. */
async function writeFrames(ctx, frames, delayMs, plan) {
  const { res, entry } = ctx;
  const limit = plan.stallAt ?? plan.cutAt ?? plan.endAt;
  for (let i = 0; i < frames.length; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs);
    if (ctx.closed) return;
    let buf = Buffer.from(frames[i]);
    if (limit !== undefined && entry.bytesSent + buf.length >= limit) {
      buf = buf.subarray(0, limit - entry.bytesSent);
      entry.bytesSent += buf.length;
      if (plan.stallAt !== undefined) {
        // Stall: keep the connection open and send nothing more, like a hung upstream.
        if (buf.length) res.write(buf);
        return;
      }
      if (plan.cutAt === undefined) {
        // End: a clean end of the body, as if the reply were complete.
        res.end(buf);
        return;
      }
      ctx.serverCut = true;
      const cut = () => res.socket && res.socket.destroy();
      if (buf.length) res.write(buf, cut);
      else cut();
      return;
    }
    entry.bytesSent += buf.length;
    if (!res.write(buf)) await drained(res);
  }
  if (!ctx.closed) res.end();
}

/** Resolve on 'drain' or 'close', whichever comes first, leaving no listener behind. */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The headers as logged: names all kept, values only for LOGGED_HEADERS and x-mock-*. */
function redactHeaders(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = LOGGED_HEADERS.has(name) || isScriptHeader(name) ? value : '***';
  }
  return out;
}

function redactQuery(url) {
  const u = new URL(url);
  if (u.searchParams.has('key')) u.searchParams.set('key', '***');
  return decodeURIComponent(u.pathname) + (u.search ? decodeURIComponent(u.search) : '');
}

// ---------------------------------------------------------------------------------------------
// Command line: node tests/mock-llm/server.mjs [--port 8788] [--delay 15] [--no-auth] [--verbose]

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? a.split(/=(.*)/s) : [a, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--port') opts.port = Number(value());
    else if (flag === '--host') opts.host = value();
    else if (flag === '--delay') opts.delayMs = Number(value());
    else if (flag === '--chunk') opts.chunkChars = Number(value());
    else if (flag === '--no-auth') opts.requireKey = false;
    else if (flag === '--verbose') opts.verbose = true;
    else {
      console.error(`usage: server.mjs [--port N] [--host 127.0.0.1] [--delay MS] [--chunk CHARS] [--no-auth] [--verbose]`);
      process.exit(2);
    }
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const mock = await startMockLlm(parseArgs(process.argv.slice(2)));
  console.log(`mock-llm listening on ${mock.url}`);
  const stop = () => mock.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
