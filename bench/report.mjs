// `make bench`, last step (run by scripts/bench.sh): bench/out/*.json → bench/results.json
// (every raw figure kept), a table on stdout, the same table in README.md between the
// `bench:begin`/`bench:end` markers, and exit code 1 when a target is over the size budget.
//   node bench/report.mjs --out bench/results.json --readme README.md
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const OUT = new URL('./out/', import.meta.url);
const load = (name) => {
  const url = new URL(name, OUT);
  if (!existsSync(url)) throw new Error(`bench/out/${name} is missing: run make bench`);
  return JSON.parse(readFileSync(url, 'utf8'));
};

// Budgets other than size (which README.md states and bench/size.mjs reads) live here and are
// printed with the table; missing one is reported, not fatal.
const BUDGETS = {
  streaming_ratio: 2, // engine time ≤ 2× a hand-written fetch + SSE loop over the same stream
  persisted_send_ratio: 3, // one persisted message (message + chat + counters) ≤ 3× one bare put
  reopen_ratio: 5, // open + first page of a 10,000-message chat ≤ 5× bare open + 50-record read
  memory_growth: 1.1, // native RSS / Node live memory after 10,000 messages ≤ 1.1× after 1,000 (session off)
  cold_start_ms: 150, // instantiate + AgentWorld.create, Chromium and Node
};

const size = load('size.json');
const native = load('native.json');
const node = load('node.json');
const chromium = load('chromium.json');
const hyper = load('hyperfine-node.json');
const timings = existsSync(new URL('timings.txt', OUT))
  ? readFileSync(new URL('timings.txt', OUT), 'utf8').trim().split('\n').map((l) => {
    const [s, ...cmd] = l.split(' ');
    return { seconds: Number(s), command: cmd.join(' ') };
  })
  : [];

const cpuModel = (readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) || [])[1] ?? cpus()[0]?.model;
const machine = {
  date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  nproc: Number(process.env.BENCH_NPROC) || cpus().length,
  cpu: cpuModel,
  node: process.version,
  chromium: chromium.runtime.replace(/^chromium /, ''),
  bench_seconds: Number(process.env.BENCH_SECONDS) || null,
};

// ---------------------------------------------------------------------------------------------
const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
const ms = (x, d = 1) => `${x.toFixed(d)}`;
const spread = (s, d = 1) => `${ms(s.median, d)} (${ms(s.min, d)}–${ms(s.max, d)})`;
const x = (r) => `${r.toFixed(2)}×`;
const ok = (pass) => (pass ? '✔' : '✘ over budget');
const int = (n) => Math.round(n).toLocaleString('en-US');
const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

const checks = [];
const check = (what, pass, figure) => checks.push({ what, pass, figure });

const lines = [];
lines.push(`Measured ${machine.date} on ${machine.nproc} cores (${machine.cpu}), Node ${machine.node}, Chromium ${machine.chromium}; ` +
  `${native.reps} repetitions per figure, median (min–max); the whole \`make bench\` took ${machine.bench_seconds ?? '?'} s.`);

lines.push('', `**Size** (budget: gzip of .wasm + glue ≤ ${kb(size.budget_gzip_bytes)} per target)`, '');
lines.push(table(['target', '.wasm raw / gzip / brotli', 'JS glue raw / gzip / brotli', 'total gzip', 'of budget'],
  size.targets.map((t) => [t.target, `${kb(t.wasm.raw)} / ${kb(t.wasm.gzip)} / ${kb(t.wasm.brotli)}`,
    `${kb(t.glue.raw)} / ${kb(t.glue.gzip)} / ${kb(t.glue.brotli)}`, kb(t.total.gzip), `${(100 * t.gzip_vs_budget).toFixed(0)} %`])));
for (const t of size.targets) check(`size ${t.target}: gzip ≤ ${kb(size.budget_gzip_bytes)}`, !t.over_budget, kb(t.total.gzip));

if (size.twiggy) {
  const tw = size.twiggy;
  lines.push('', `**What costs the most**: \`twiggy top\` and \`twiggy dominators\` of the release code with names kept (${kb(tw.without_names_bytes)} without the name sections; % of that)`, '');
  const cut = (s, n) => `\`${s.length > n ? `${s.slice(0, n)}…` : s}\``;
  lines.push(table(['largest items (shallow)', 'bytes', 'dominators (retained)', 'bytes', 'by crate', 'bytes'], tw.top.map((t, i) => {
    const d = tw.dominators[i];
    const c = tw.by_crate[i];
    return [cut(t.name, 60), `${int(t.bytes)} (${t.percent.toFixed(1)} %)`, d ? cut(d.name, 60) : '', d ? `${int(d.retained_bytes)} (${d.percent.toFixed(1)} %)` : '',
      c ? c.crate : '', c ? `${int(c.bytes)} (${c.percent.toFixed(1)} %)` : ''];
  })));
}

lines.push('', '**Streaming overhead**: response head → last `sse` chunk callback, engine (one agent, stream on) vs a hand-written fetch + TextDecoder + SSE split loop over the same mock stream', '');
const streamRows = [];
for (const [rt, rows] of [['Chromium', chromium.streaming], ['Node', node.streaming]]) {
  for (const r of rows) {
    streamRows.push([rt, int(r.n), spread(r.engine_ms), spread(r.raw_ms), x(r.ratio), `${r.engine_us_per_chunk.toFixed(2)} / ${r.raw_us_per_chunk.toFixed(2)}`]);
    check(`streaming ${rt} n=${r.n}: ratio ≤ ${BUDGETS.streaming_ratio}×`, r.ratio <= BUDGETS.streaming_ratio, x(r.ratio));
  }
}
lines.push(table(['runtime', 'chunks', 'engine ms', 'raw JS ms', 'ratio', 'µs/chunk engine / raw'], streamRows));

const p = chromium.persistence;
lines.push('', '**Persistence** (Chromium, IndexedDB) vs bare IndexedDB in the same page', '');
lines.push(table(['what', 'engine', 'bare IndexedDB', 'ratio'], [
  ['one persisted message (`send`, no agents)', `${spread(p.send_ms, 2)} ms`, `${spread(p.bare_put_ms, 2)} ms (one-\`put\` transaction)`, x(p.send_ms.median / p.bare_put_ms.median)],
  [`${int(p.turns)}-turn conversation (human + instant agent, ${int(p.messages)} messages)`, `${int(p.conversation_ms)} ms (${ms(p.turn_ms.median, 2)} ms/turn)`, `${int(p.bare_conversation_ms)} ms (${int(p.messages)} puts)`, x(p.conversation_ms / p.bare_conversation_ms)],
  [`import a ${int(p.fill.messages)}-message world`, `${int(p.fill.import_ms)} ms`, `${int(p.fill.bare_fill_ms)} ms (one transaction)`, x(p.fill.import_ms / p.fill.bare_fill_ms)],
  [`reopen it: \`AgentWorld.open\``, `${spread(p.reopen.open_ms)} ms`, `${spread(p.reopen.bare_open_ms)} ms (open)`, ''],
  ['… then the first `messages()` page (50)', `${spread(p.reopen.first_page_ms)} ms`, `${spread(p.reopen.bare_page_ms)} ms (50-record cursor)`, ''],
  ['… open + first page', `${spread(p.reopen.total_ms)} ms`, `${spread(p.reopen.bare_total_ms)} ms`, x(p.reopen.total_ms.median / p.reopen.bare_total_ms.median)],
]));
check(`persisted send ≤ ${BUDGETS.persisted_send_ratio}× bare put`, p.send_ms.median / p.bare_put_ms.median <= BUDGETS.persisted_send_ratio, x(p.send_ms.median / p.bare_put_ms.median));
check(`reopen 10,000 ≤ ${BUDGETS.reopen_ratio}× bare`, p.reopen.total_ms.median / p.reopen.bare_total_ms.median <= BUDGETS.reopen_ratio, x(p.reopen.total_ms.median / p.reopen.bare_total_ms.median));

lines.push('', `**Routing throughput**: published messages per second (each routed to every agent), zero-latency LLM, memory store, ${int(native.messages_per_rep)} messages per repetition`, '');
lines.push(table(['agents', 'native msg/s', 'Node msg/s', 'native ÷ Node', 'µs per message (native / Node)'],
  native.routing.map((n, i) => {
    const j = node.routing[i];
    return [n.agents, `${int(n.messages_per_s)} (${int(n.min)}–${int(n.max)})`, `${int(j.messages_per_s)} (${int(j.min)}–${int(j.max)})`,
      x(n.messages_per_s / j.messages_per_s), `${n.us_per_message.toFixed(1)} / ${j.us_per_message.toFixed(1)}`];
  })));

const nm = native.memory;
const jm = node.memory;
const growth = (a, b) => b / a;
const live = (m) => m.heapUsed + m.external;
lines.push('', '**Memory** after 1,000 vs 10,000 published messages (10 agents; session off = nothing stored, only the engine\'s bounded windows stay; session on = the memory store keeps every message)', '');
lines.push(table(['process', 'at 1,000', 'at 10,000', 'growth'], [
  ['native VmRSS, session off', `${int(nm.session_off.rss_kib_1k)} KiB`, `${int(nm.session_off.rss_kib_10k)} KiB`, x(growth(nm.session_off.rss_kib_1k, nm.session_off.rss_kib_10k))],
  ['native VmRSS, session on', `${int(nm.session_on.rss_kib_1k)} KiB`, `${int(nm.session_on.rss_kib_10k)} KiB`, x(growth(nm.session_on.rss_kib_1k, nm.session_on.rss_kib_10k))],
  ['Node live: heapUsed + external (wasm memory), session off', mib(live(jm.session_off.at1k)), mib(live(jm.session_off.at10k)), x(growth(live(jm.session_off.at1k), live(jm.session_off.at10k)))],
  ['Node live, session on', mib(live(jm.session_on.at1k)), mib(live(jm.session_on.at10k)), x(growth(live(jm.session_on.at1k), live(jm.session_on.at10k)))],
  ['Node RSS (V8 heap reserved: heapTotal), session off', `${mib(jm.session_off.at1k.rss)} (${mib(jm.session_off.at1k.heapTotal)})`, `${mib(jm.session_off.at10k.rss)} (${mib(jm.session_off.at10k.heapTotal)})`, x(growth(jm.session_off.at1k.rss, jm.session_off.at10k.rss))],
]));
check(`native RSS flat (session off, ≤ ${BUDGETS.memory_growth}×)`, growth(nm.session_off.rss_kib_1k, nm.session_off.rss_kib_10k) <= BUDGETS.memory_growth, x(growth(nm.session_off.rss_kib_1k, nm.session_off.rss_kib_10k)));
check(`Node live memory flat (session off, ≤ ${BUDGETS.memory_growth}×)`, growth(live(jm.session_off.at1k), live(jm.session_off.at10k)) <= BUDGETS.memory_growth, x(growth(live(jm.session_off.at1k), live(jm.session_off.at10k))));

const cc = chromium.cold_start;
const nc = node.cold_start;
const [hPkg, hEmpty] = hyper.results;
const hs = (r) => ({ median: 1000 * r.median, min: 1000 * r.min, max: 1000 * r.max });
lines.push('', '**Cold start**: compile + instantiate the module and `AgentWorld.create`, vs instantiating an empty wasm module in the same run', '');
lines.push(table(['runtime', 'instantiate', 'create', 'total', 'empty module', 'ratio'], [
  ['Chromium page (from fetched bytes; IndexedDB)', `${spread(cc.init_ms)} ms`, `${spread(cc.create_ms)} ms`, `${spread(cc.total_ms)} ms`, `${spread(cc.empty_ms, 2)} ms`, x(cc.ratio)],
  ['Node (`require` pkg/nodejs; memory)', `${spread(nc.load_ms)} ms`, `${spread(nc.create_ms)} ms`, `${spread(nc.total_ms)} ms`, `${spread(nc.empty_ms, 2)} ms`, x(nc.ratio)],
  ['Node whole process (hyperfine, 10 runs)', '', '', `${spread(hs(hPkg))} ms`, `${spread(hs(hEmpty))} ms`, x(hPkg.median / hEmpty.median)],
]));
check(`cold start Chromium ≤ ${BUDGETS.cold_start_ms} ms`, cc.total_ms.median <= BUDGETS.cold_start_ms, `${ms(cc.total_ms.median)} ms`);
check(`cold start Node ≤ ${BUDGETS.cold_start_ms} ms`, nc.total_ms.median <= BUDGETS.cold_start_ms, `${ms(nc.total_ms.median)} ms`);

lines.push('', '**Budgets**', '');
lines.push(table(['budget', 'measured', ''], checks.map((c) => [c.what, c.figure, ok(c.pass)])));
const text = lines.join('\n');

const results = { machine, budgets: { size_gzip_bytes: size.budget_gzip_bytes, ...BUDGETS }, checks, timings, size, native, node, chromium, hyperfine_node: hyper };
writeFileSync(arg('--out', 'bench/results.json'), `${JSON.stringify(results, null, 1)}\n`);
console.log(text);

const readmePath = arg('--readme');
if (readmePath) {
  const readme = readFileSync(readmePath, 'utf8');
  const re = /(<!-- bench:begin[^>]*-->)[\s\S]*?(<!-- bench:end -->)/;
  if (!re.test(readme)) throw new Error(`${readmePath} has no <!-- bench:begin --> … <!-- bench:end --> markers`);
  writeFileSync(readmePath, readme.replace(re, (_, a, b) => `${a}\n${text}\n${b}`));
}
if (size.over_budget) {
  console.error(`bench: over the size budget (${size.targets.filter((t) => t.over_budget).map((t) => `${t.target} ${kb(t.total.gzip)}`).join(', ')} > ${kb(size.budget_gzip_bytes)} gzip)`);
  process.exit(1);
}
