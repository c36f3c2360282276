// `make bench`, Chromium part (run by scripts/bench.sh): cold start, streaming overhead and
// IndexedDB persistence in headless Chromium (Debian's, driven by playwright-core), through
// pkg/web. A tiny static server on 127.0.0.1 serves pkg/web/ and bench/; the mock LLM runs
// in its own process on another port (cross-origin, as a real provider is).
//   node bench/chromium.mjs --mock URL --reps 5 --out bench/out/chromium.json
import { writeFile } from 'node:fs/promises';
import { launchChromium, serveDir } from '../tests/support/chromium.mjs';
import { stats } from './common.mjs';

const root = new URL('../', import.meta.url);
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const log = (line) => console.error(`bench chromium: ${line}`);
const mockUrl = arg('--mock');
const reps = Number(arg('--reps', 5));
if (!mockUrl) throw new Error('bench/chromium.mjs needs --mock URL (scripts/bench.sh starts the mock LLM)');

const server = await serveDir(new URL(root).pathname, { only: ['/pkg/web/', '/bench/'] });
const base = server.url;
const browser = await launchChromium();

/** Opens /bench/page.html?mode=… in `context` and returns the page's result. */
async function run(context, params, timeout = 240_000) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${base}/bench/page.html?${new URLSearchParams({ mock: mockUrl, reps, ...params })}`);
    await page.waitForFunction(() => globalThis.__result, null, { timeout, polling: 100 });
    const result = await page.evaluate(() => globalThis.__result);
    if (result.failure) throw new Error(`${params.mode}: ${result.failure}`);
    if (errors.length) throw new Error(`${params.mode}: page errors: ${errors.join('; ')}`);
    return result;
  } finally {
    await page.close();
  }
}

/** A fresh browser context (empty IndexedDB, no caches) per call. */
async function inFreshContext(fn) {
  const context = await browser.newContext();
  try {
    return await fn(context);
  } finally {
    await context.close();
  }
}

const result = { runtime: `chromium ${browser.version()}` };
try {
  // Cold start: every repetition in a new context (first visit: no compiled-code cache, no database).
  const cold = [];
  for (let i = 0; i < Math.max(reps, 7); i++) cold.push(await inFreshContext((c) => run(c, { mode: 'cold' })));
  const field = (k) => stats(cold.map((x) => x[k]));
  result.cold_start = { init_ms: field('init_ms'), create_ms: field('create_ms'), total_ms: field('total_ms'), compile_ms: field('compile_ms'), wasm_bytes: cold[0].wasm_bytes, raw: cold };
  result.cold_start.ratio = result.cold_start.total_ms.median / result.cold_start.compile_ms.median;
  log(`cold start ${result.cold_start.total_ms.median.toFixed(1)} ms (init ${result.cold_start.init_ms.median.toFixed(1)}) vs compiling the same bytes alone ${result.cold_start.compile_ms.median.toFixed(1)} ms`);

  const streams = await inFreshContext((c) => run(c, { mode: 'stream' }, 480_000));
  result.streaming = streams.rows;
  result.tool_streaming = streams.tool_rows;
  for (const r of result.streaming) log(`streaming n=${r.n}: ratio ${r.ratio.toFixed(2)}, ${r.engine_us_per_chunk.toFixed(1)} µs/chunk (raw ${r.raw_us_per_chunk.toFixed(1)})`);
  for (const r of result.tool_streaming) log(`tool step n=${r.n}: ${r.tool_us_per_chunk.toFixed(2)} µs/chunk vs ${r.plain_us_per_chunk.toFixed(2)} without`);

  result.persistence = await inFreshContext(async (c) => {
    const p = await run(c, { mode: 'persist' });
    log(`persisted send ${p.send_ms.median.toFixed(2)} ms vs bare put ${p.bare_put_ms.median.toFixed(2)} ms; ${p.turns} turns ${p.conversation_ms.toFixed(0)} ms`);
    const fill = await run(c, { mode: 'fill' });
    log(`imported ${fill.messages} messages in ${fill.import_ms.toFixed(0)} ms`);
    // At least 11 reopens: the bare baseline (open + 50 records) takes a few ms, and with 5
    // samples its median alone moved the ratio by a third between runs of the same build.
    const reopens = [];
    // Each repetition: the engine in a fresh page, then the baseline in another fresh page
    // (see `reopen` in page.mjs: a page's first IndexedDB connection costs extra, so each side
    // pays it once).
    for (let i = 0; i < Math.max(reps, 11); i++) {
      const engine = await run(c, { mode: 'reopen', side: 'engine', world: fill.id, chat: fill.chatId });
      const bare = await run(c, { mode: 'reopen', side: 'bare' });
      reopens.push({ ...engine, ...bare });
    }
    const f = (k) => stats(reopens.map((x) => x[k]));
    const reopen = { messages: fill.messages, open_ms: f('open_ms'), first_page_ms: f('first_page_ms'), total_ms: f('total_ms'),
      bare_total_ms: f('bare_total_ms'), bare_open_ms: f('bare_open_ms'), bare_page_ms: f('bare_page_ms'), raw: reopens };
    log(`reopen ${fill.messages}: open ${reopen.open_ms.median.toFixed(1)} ms + first page ${reopen.first_page_ms.median.toFixed(1)} ms`);
    return { ...p, fill, reopen };
  });
} finally {
  await browser.close();
  await server.close();
}
await writeFile(arg('--out', '/dev/stdout'), JSON.stringify(result, null, 1));
