// Scenarios shared by the Node (bench/node.mjs) and Chromium (bench/page.html) parts of
// `make bench`. Plain ES module with no Node or DOM specifics: each scenario takes the
// package's AgentWorld class and returns raw timings (ms, from performance.now()).

/** Median, min and max of a list of numbers (the machine is shared: spread matters). */
export function stats(values) {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  const median = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return { median, min: v[0], max: v[n - 1], n };
}

/** The reply the mock's `tokens:<n>` fault streams: n one-word chunks. */
export const tokensReplyLength = (n) => 4 * n - 1;

let serial = 0;
/** A world name no earlier run used (worlds are keyed by name in a shared store). */
export const uniqueName = (base) => `${base} ${Date.now().toString(36)} ${++serial}`;

/** The text the mock streams back as exactly n one-word chunks (`tok`, ` tok`, …). */
const tokensText = (n) => `tok${' tok'.repeat(n - 1)}`;

/** The tool of the tool-step case: answers at once. */
export const PING_TOOL = {
  name: 'ping',
  description: 'Answers at once (bench)',
  parameters: { type: 'object', properties: {} },
  execute: () => ({ ok: true }),
};

/**
 * The engine: one agent with streaming on, the mock streaming `n` chunks with no delay. The
 * window is from the response head (`fetch` resolved, i.e. the first bytes) to the last `sse`
 * `chunk` callback; fetch is wrapped only to note that moment (the last fetch's: with a tool
 * step, the streaming step's).
 *
 * `script`: how the mock is told to stream n chunks. `fault` (default) = `mock-fault:
 * tokens:n`; `reply` = a `mock-reply:` line of the same n words; `tool` = the same reply after
 * a first step that calls the `ping` tool (`mock-tool: ping {}`; the mock's `tokens` fault
 * would apply to both steps, so the two tool-case variants both use `reply`).
 */
export async function engineStream({ AgentWorld, mockUrl, n, storage, script = 'fault' }) {
  const world = await AgentWorld.create({ name: uniqueName('Bench Stream'), ...(storage ? { storage } : {}) });
  try {
    world.configureProvider('openai', { apiKey: 'bench-key', baseUrl: `${mockUrl}/v1` });
    const prompt = script === 'fault' ? `mock-fault: tokens:${n}` : `${script === 'tool' ? 'mock-tool: ping {}\n' : ''}mock-reply: ${tokensText(n)}`;
    if (script === 'tool') world.registerTool(PING_TOOL);
    await world.addAgent({ name: 'Streamer', provider: 'openai', model: 'bench', systemPrompt: prompt, ...(script === 'tool' ? { tools: ['ping'] } : {}) });
    let head = 0;
    let last = 0;
    let callbacks = 0;
    let toolResults = 0;
    let fetches = 0;
    let reply = '';
    world.on('sse', (e) => {
      if (e.type === 'chunk') {
        callbacks++;
        last = performance.now();
      } else if (e.type === 'tool-result') toolResults++;
    });
    world.on('message', (m) => {
      if (m.sender === 'streamer') reply = m.content;
    });
    const realFetch = globalThis.fetch;
    globalThis.fetch = async (...args) => {
      const res = await realFetch(...args);
      head = performance.now();
      fetches++;
      return res;
    };
    let t0 = 0;
    try {
      t0 = performance.now();
      await world.send('go');
      await world.idle();
    } finally {
      globalThis.fetch = realFetch;
    }
    if (reply.length !== tokensReplyLength(n)) throw new Error(`engine stream (${script}): reply of ${reply.length} chars, expected ${tokensReplyLength(n)}`);
    if (script === 'tool' && (toolResults !== 1 || fetches !== 2)) throw new Error(`engine stream (tool): ${toolResults} tool results over ${fetches} requests, expected 1 over 2`);
    return { ms: last - head, callbacks, reply_ms: last - t0 };
  } finally {
    world.free?.();
  }
}

/**
 * The baseline: what a careful page would write by hand over the same stream: fetch, a
 * streaming TextDecoder, split on blank lines, JSON.parse each `data:` line, one callback per
 * content delta. Same request, same window (response head → last callback).
 */
export async function rawStream({ mockUrl, n }) {
  const res = await fetch(`${mockUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bench',
      stream: true,
      messages: [{ role: 'system', content: `mock-fault: tokens:${n}` }, { role: 'user', content: 'go' }],
    }),
  });
  const head = performance.now();
  let last = 0;
  let callbacks = 0;
  let text = '';
  const onChunk = (c) => {
    text += c;
    callbacks++;
    last = performance.now();
  };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let start = 0;
    let end;
    while ((end = buf.indexOf('\n\n', start)) >= 0) {
      for (const line of buf.slice(start, end).split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') continue;
        const content = JSON.parse(data).choices[0]?.delta?.content;
        if (content) onChunk(content);
      }
      start = end + 2;
    }
    buf = buf.slice(start);
  }
  if (text.length !== tokensReplyLength(n)) throw new Error(`raw stream: ${text.length} chars, expected ${tokensReplyLength(n)}`);
  return { ms: last - head, callbacks };
}

/**
 * How many timed samples a stream of `n` chunks gets. A 1,000-chunk stream lasts a few
 * milliseconds, the size of the scheduler's and the clock's noise on this shared machine: with
 * `reps` samples its median moved 2–3× between runs of the same build. Short streams get as
 * many samples as it takes to stream about 25,000 chunks (at least `reps`, at most 5×).
 */
export const samplesFor = (n, reps) => Math.max(reps, Math.min(5 * reps, Math.ceil(25000 / n)));

/** Engine and raw loop alternated per n (alternating spreads the noise evenly). */
export async function streamingBench({ AgentWorld, mockUrl, sizes, reps, storage, log = () => {} }) {
  const out = [];
  for (const n of sizes) {
    // Untimed pairs first: connection warm-up, and the JIT's (V8 compiles wasm functions
    // with a baseline compiler first and optimises the hot ones later; measured here is the
    // steady state, not the first stream of a page).
    for (let i = 0; i < 3; i++) {
      await engineStream({ AgentWorld, mockUrl, n: Math.min(n, 5000), storage });
      await rawStream({ mockUrl, n: Math.min(n, 5000) });
    }
    const engine = [];
    const raw = [];
    let callbacks = 0;
    for (let i = 0; i < samplesFor(n, reps); i++) {
      const e = await engineStream({ AgentWorld, mockUrl, n, storage });
      engine.push(e.ms);
      callbacks = e.callbacks;
      raw.push((await rawStream({ mockUrl, n })).ms);
    }
    const e = stats(engine);
    const r = stats(raw);
    const row = {
      n,
      engine_ms: e,
      raw_ms: r,
      ratio: e.median / r.median,
      engine_us_per_chunk: (1000 * e.median) / n,
      raw_us_per_chunk: (1000 * r.median) / n,
      engine_sse_callbacks: callbacks,
      raw: { engine, raw },
    };
    log(`streaming n=${n}: engine ${e.median.toFixed(1)} ms, raw ${r.median.toFixed(1)} ms, ratio ${row.ratio.toFixed(2)}`);
    out.push(row);
  }
  return out;
}

/**
 * A tool step must not change the per-chunk cost of streaming: the same n-chunk reply with and
 * without a first step that calls a tool answering at once, alternated, after untimed pairs.
 * Both windows are the streaming step's (its response head → last chunk).
 */
export async function toolStreamBench({ AgentWorld, mockUrl, sizes, reps, storage, log = () => {} }) {
  const out = [];
  for (const n of sizes) {
    for (let i = 0; i < 3; i++) {
      await engineStream({ AgentWorld, mockUrl, n: Math.min(n, 5000), storage, script: 'reply' });
      await engineStream({ AgentWorld, mockUrl, n: Math.min(n, 5000), storage, script: 'tool' });
    }
    const plain = [];
    const tool = [];
    const toolReply = [];
    for (let i = 0; i < samplesFor(n, reps); i++) {
      plain.push((await engineStream({ AgentWorld, mockUrl, n, storage, script: 'reply' })).ms);
      const t = await engineStream({ AgentWorld, mockUrl, n, storage, script: 'tool' });
      tool.push(t.ms);
      toolReply.push(t.reply_ms);
    }
    const p = stats(plain);
    const t = stats(tool);
    const row = {
      n,
      plain_ms: p,
      tool_ms: t,
      tool_reply_ms: stats(toolReply),
      ratio: t.median / p.median,
      plain_us_per_chunk: (1000 * p.median) / n,
      tool_us_per_chunk: (1000 * t.median) / n,
      raw: { plain, tool, tool_reply: toolReply },
    };
    log(`tool step n=${n}: ${row.tool_us_per_chunk.toFixed(2)} µs/chunk after a tool step vs ${row.plain_us_per_chunk.toFixed(2)} without (${row.ratio.toFixed(2)}×)`);
    out.push(row);
  }
  return out;
}

export const HUMAN_MESSAGE = 'Hello everyone, what should we build next? Keep it short.';
export const AGENT_REPLY = 'I would start with the smallest useful piece and measure it.';

/** A `custom` provider that answers at once (a zero-latency LLM). */
export const instantProvider = {
  async *stream() {
    yield AGENT_REPLY;
  },
};

/**
 * A world with `agents` agents on the instant provider; `published()` counts `message` events.
 * `drive(target)` sends public human messages (each agent answers) until `target` are published.
 */
export async function routingWorld({ AgentWorld, agents, storage }) {
  const world = await AgentWorld.create({ name: uniqueName(`Bench Route ${agents}`), ...(storage ? { storage } : {}) });
  world.registerProvider(instantProvider);
  for (let i = 0; i < agents; i++) await world.addAgent({ name: `agent-${i}`, provider: 'custom', model: 'instant' });
  let published = 0;
  world.on('message', () => published++);
  return {
    world,
    published: () => published,
    async drive(target) {
      let human = 0;
      while (published < target) {
        await world.send(HUMAN_MESSAGE);
        await world.idle();
        human++;
      }
      return human;
    },
  };
}
