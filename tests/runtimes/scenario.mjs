// The provider × runtime matrix: ONE runtime-neutral scenario, run unchanged in Node 20
// (pkg/nodejs), Deno, Cloudflare workerd, a Chromium page and a Chromium dedicated worker (pkg/web),
// each against the local mock LLM (tests/mock-llm). It uses only the public JS API and only
// globalThis (fetch, AbortController, setTimeout, console): no `node:`, `process` or `window`.
// It returns a JSON-able report of what it observed; tests/runtimes/assert-report.mjs holds the
// assertions, applied identically by every runner (tests/runtimes/matrix-*.test.mjs).
//
// Matrix (every row runs in every runtime: node, deno, workerd, chromium-page, chromium-worker).
// One world per provider; every fault case is followed by a `recover` send on the SAME world.
//
// provider          | case       | fault (mock directive)               | covered by (assert-report.mjs)
// ------------------|------------|--------------------------------------|------------------------------------
// openai            | stream     | -                                    | assertStream (start, ≥2 chunks in order, end, message == text)
// openai            | reasoning  | mock-reasoning:                      | assertReasoning (SSE reasoning == scripted, not in the reply)
// openai            | retry503   | status-once:503                      | assertRetried (2 requests, reply published, no error event)
// azure             | stream     | -                                    | assertStream
// azure             | status401  | status:401                           | assertHttp401 (llm_error, "HTTP 401", 1 request)
// azure             | huge       | huge:200000                          | assertHuge (200000-char reply published whole)
// xai               | stream     | -                                    | assertStream
// xai               | malformed  | malformed                            | assertMalformed (llm_error "malformed", SSE error)
// openai-compatible | stream     | - (no key, /compat/v1)               | assertStream
// openai-compatible | cut        | cut:1000 (after output), delay 20    | assertCut (SSE error + partialContent, interrupted msg, 1 request)
// anthropic         | stream     | -                                    | assertStream
// anthropic         | reasoning  | mock-reasoning: (thinking blocks)    | assertReasoning
// anthropic         | stop       | world.stop() mid-stream (delay 100)  | assertStopped (SSE error, llm_aborted, closedByClient, 1 request)
// google            | stream     | - (alt=sse, CRLF events)             | assertStream
// google            | reasoning  | mock-reasoning: (thought parts)      | assertReasoning
// google            | timeout    | drip:150, setTimeouts(400, 10000)    | assertTimeout (llm_timeout, closedByClient)
// ollama            | stream     | - (ndjson)                           | assertStream
// ollama            | reasoning  | mock-reasoning: (thinking)           | assertReasoning
// ollama            | stall      | stall:300, setTimeouts(10000, 300)   | assertStalled (llm_stalled, closedByClient)
// ollama            | empty      | empty                                | assertEmpty (llm_empty_response, nothing published)
// custom (JS)       | stream     | async generator                      | assertStream
// custom (JS)       | reasoning  | yields {reasoning}                   | assertReasoning
// custom (JS)       | stop       | world.stop() mid-generator           | assertCustomStop (signal aborted, generator ended, llm_aborted)
// every provider    | recover    | after each fault case above          | assertRecovered (same world answers the next message)
//
// Also in tests/runtimes/: web-build-globals.test.mjs (the web glue names no window, process or
// node: module), and two `todo` tests for engine bugs found here: on-gc.test.mjs (a callback is
// unsubscribed when the function `on()` returned is garbage-collected, so this scenario keeps
// them) and cut-message.test.mjs (a mid-stream cut is reported as "failed before any response").
//
// Every case uses a fresh random `x-mock-key` header (configureProvider(..., {headers})) to find
// its own requests in the mock's log. Every wait is bounded and fails the case with a message.

const TEXT = 'héllo 世界, streamed through the engine 🌍 ✓';
const DEFAULT_TIMEOUTS = [120_000, 30_000];
const CASE_TIMEOUT_MS = 15_000;

export const PROVIDERS = ['openai', 'azure', 'xai', 'openai-compatible', 'anthropic', 'google', 'ollama', 'custom'];

/** The fault cases per provider, in the order they run (after `stream`). */
export const FAULTS = {
  openai: ['reasoning', 'retry503'],
  azure: ['status401', 'huge'],
  xai: ['malformed'],
  'openai-compatible': ['cut'],
  anthropic: ['reasoning', 'stop'],
  google: ['reasoning', 'timeout'],
  ollama: ['reasoning', 'stall', 'empty'],
  custom: ['reasoning', 'stop'],
};

/** Long texts (the `huge` case) travel as their length, first 200 characters and a checksum. */
function clip(content) {
  if (typeof content !== 'string' || content.length <= 2000) return { content };
  let sum = 0;
  for (let i = 0; i < content.length; i++) sum = (sum * 31 + content.charCodeAt(i)) >>> 0;
  return { content: content.slice(0, 200), contentLength: content.length, contentSum: sum };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function randomKey() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  return `k${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
}

/** Rejects with `what` when `promise` takes longer than `ms`. */
async function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every 25 ms until it returns a truthy value, or fails after `ms`. */
async function until(check, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

function providerSettings(provider, mockUrl, key) {
  const headers = { 'x-mock-key': key };
  switch (provider) {
    case 'openai':
    case 'xai':
      return { apiKey: 'test-key', baseUrl: `${mockUrl}/v1`, headers };
    case 'openai-compatible':
      return { baseUrl: `${mockUrl}/compat/v1`, headers };
    case 'azure':
      return { apiKey: 'test-key', endpoint: mockUrl, deployment: 'gpt-test', headers };
    case 'anthropic':
    case 'google':
      return { apiKey: 'test-key', baseUrl: mockUrl, headers };
    case 'ollama':
      return { baseUrl: mockUrl, headers };
    default:
      throw new Error(`no mock settings for ${provider}`);
  }
}

/**
 * The custom JS provider: it follows the same `mock-*` directives as the mock (reply, reasoning,
 * delay) from the system prompt, so the cases read the same for every provider.
 */
function customProvider(state) {
  return {
    async *stream(request, { signal }) {
      state.calls++;
      state.signal = signal;
      state.finished = false;
      const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
      const directive = (name) => system.match(new RegExp(`^mock-${name}: ?(.*)$`, 'm'))?.[1];
      const reply = directive('reply') ?? 'custom reply';
      const reasoning = directive('reasoning');
      const delay = Number(directive('delay') ?? 0);
      try {
        if (reasoning) for (const r of reasoning.match(/\s*\S+/g)) yield { reasoning: r };
        for (const piece of reply.match(/\s*\S+/g)) {
          if (delay) await sleep(delay);
          if (signal.aborted) return;
          yield piece;
        }
      } finally {
        state.finished = true;
      }
    },
  };
}

const WORDS = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');

/** The system prompt, timeouts and action of each case. */
function caseSpec(name, provider) {
  switch (name) {
    case 'stream':
      return { prompt: `mock-reply: ${TEXT}` };
    case 'reasoning':
      return { prompt: 'mock-reply: the answer is 4\nmock-reasoning: two plus two makes four' };
    case 'retry503':
      return { prompt: 'mock-reply: second time lucky\nmock-fault: status-once:503' };
    case 'status401':
      return { prompt: 'mock-reply: never sent\nmock-fault: status:401' };
    case 'huge':
      return { prompt: 'mock-fault: huge:200000' };
    case 'malformed':
      return { prompt: 'mock-reply: fine until here and then broken\nmock-fault: malformed' };
    case 'cut':
      // A pause between frames so the client has read the output before the socket is
      // destroyed: Chromium drops bytes still unread when a reset arrives (then no output
      // started, the engine rightly retries, and there is no partial content to check).
      return { prompt: `mock-reply: ${WORDS}\nmock-delay: 20\nmock-fault: cut:1000` };
    case 'stall':
      return { prompt: `mock-reply: ${WORDS}\nmock-fault: stall:300`, timeouts: [10_000, 300], waitClose: true };
    case 'timeout':
      return { prompt: 'mock-reply: one two three four five six seven eight\nmock-fault: drip:150',
        timeouts: [400, 10_000], waitClose: true };
    case 'empty':
      return { prompt: 'mock-fault: empty' };
    case 'stop':
      // A 3-second stream, stopped at its first chunk.
      return { prompt: `mock-reply: ${WORDS}\nmock-delay: 100`, stopAtFirstChunk: true,
        waitClose: provider !== 'custom' };
    default:
      throw new Error(`unknown case ${name}`);
  }
}

/**
 * Runs the whole matrix in this runtime. `AgentWorld` is the class of an initialised build;
 * `mockUrl` the mock LLM's base URL; `log` an optional progress logger.
 */
export async function runScenario({ AgentWorld, mockUrl, log = () => {} }) {
  const started = Date.now();
  const report = { text: TEXT, cases: [], durationMs: 0 };
  const suffix = randomKey().slice(0, 8);

  async function mockRequests(key) {
    const res = await bounded(fetch(`${mockUrl}/__mock/requests`), 5_000, 'GET /__mock/requests');
    const all = await res.json();
    return all.filter((r) => r.headers && r.headers['x-mock-key'] === key)
      .map((r) => ({ status: r.status, fault: r.fault, bytesSent: r.bytesSent, completed: r.completed,
        closedByClient: r.closedByClient }));
  }

  for (const provider of PROVIDERS) {
    const custom = { calls: 0, signal: null, finished: false };
    let world;
    try {
      world = await bounded(AgentWorld.create({ name: `Matrix ${provider} ${suffix}`, turnLimit: 100 }),
        CASE_TIMEOUT_MS, 'AgentWorld.create');
    } catch (e) {
      report.cases.push({ provider, name: 'setup', failure: String(e && e.message || e) });
      continue;
    }
    const seen = { sse: [], message: [], system: [] };
    // Keep the unsubscribe functions: the engine drops a subscription when its unsubscribe
    // function is garbage-collected (a Rust-side bug, see tests/runtimes/on-gc.test.mjs).
    const offs = Object.keys(seen).map((topic) => world.on(topic, (e) => seen[topic].push(e)));
    if (provider === 'custom') world.registerProvider(customProvider(custom));
    const agent = await world.addAgent({ name: `Agent ${provider}`, provider,
      model: 'mock-model', systemPrompt: 'mock-reply: ready' });
    const agentId = agent.id;

    /** Sends one human message under `spec`, waits for idle, returns what the world emitted. */
    async function runCase(name, spec) {
      const key = randomKey();
      if (provider !== 'custom') world.configureProvider(provider, providerSettings(provider, mockUrl, key));
      world.setTimeouts(...(spec.timeouts ?? DEFAULT_TIMEOUTS));
      await bounded(world.updateAgent(agentId, { systemPrompt: spec.prompt }), 5_000, 'updateAgent');
      const from = { sse: seen.sse.length, message: seen.message.length, system: seen.system.length };
      const t0 = Date.now();
      const obs = { provider, name, agentId };
      try {
        const sent = await bounded(world.send(`case ${name} on ${provider}`), 5_000, 'send');
        if (spec.stopAtFirstChunk) {
          await until(() => seen.sse.slice(from.sse).some((e) => e.type === 'chunk'), CASE_TIMEOUT_MS,
            'the first SSE chunk before stop()');
          world.stop();
        }
        await bounded(world.idle(), CASE_TIMEOUT_MS, `world.idle() after case ${name}`);
        obs.sent = sent.messageId;
        if (spec.waitClose) {
          // The mock notices a client close asynchronously: poll its log (bounded).
          await until(async () => (await mockRequests(key)).some((r) => r.closedByClient), 3_000,
            'the mock to see closedByClient').catch(() => {});
        }
        if (provider !== 'custom') obs.requests = await mockRequests(key);
      } catch (e) {
        obs.failure = String(e && e.message || e);
      }
      obs.ms = Date.now() - t0;
      obs.sse = seen.sse.slice(from.sse).map((e) => ({ type: e.type, agentName: e.agentName,
        messageId: e.messageId, ...clip(e.content), error: e.error, partialContent: e.partialContent }));
      obs.messages = seen.message.slice(from.message).map((m) => ({ sender: m.sender, kind: m.kind,
        ...clip(m.content), messageId: m.messageId }));
      obs.errors = seen.system.slice(from.system).filter((e) => e.type === 'error')
        .map((e) => ({ code: e.code, message: e.message, agentName: e.agentName }));
      if (provider === 'custom') {
        if (spec.stopAtFirstChunk) {
          // The generator's return() runs once its pending await settles: give it a moment.
          await until(() => custom.finished, 2_000, 'the custom generator to finish').catch(() => {});
        }
        obs.custom = { calls: custom.calls, signalAborted: Boolean(custom.signal && custom.signal.aborted),
          finished: custom.finished };
        custom.calls = 0;
      }
      return obs;
    }

    for (const name of ['stream', ...FAULTS[provider]]) {
      const obs = await runCase(name, caseSpec(name, provider));
      if (name !== 'stream') {
        // The SAME world answers the next message normally.
        const again = await runCase('recover', { prompt: `mock-reply: recovered after ${name} ✓` });
        obs.recovery = { expected: `recovered after ${name} ✓`, ...again };
      }
      log(`${provider} ${name}: ${obs.failure ? `FAILED ${obs.failure}` : 'ok'} (${obs.ms} ms)`);
      report.cases.push(obs);
    }
    for (const off of offs) off();
  }
  report.durationMs = Date.now() - started;
  return report;
}
