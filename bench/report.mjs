// `make bench`, last step (run by scripts/bench.sh): bench/out/*.json → bench/results.json
// (every raw figure kept), a table on stdout, the same table in README.md between the
// `bench:begin`/`bench:end` markers, and exit code 1 when a target is over the size budget.
//   node bench/report.mjs --out bench/results.json --readme README.md
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { stats } from './common.mjs';

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
// printed with the table; missing one is reported, never fatal, and never loosened to pass:
// they are issue 14's targets as written. Each is a ratio to a baseline of the same run except
// the per-chunk cost, the routing rate and the cold start, which the issue sets in absolute units.
const BUDGETS = {
  streaming_ratio_20000: 1.2, // engine ≤ 1.2× the hand-written fetch + SSE loop at 20,000 chunks (Chromium and Node)
  streaming_ratio_1000: 1.5, // … ≤ 1.5× at 1,000 chunks (after warm-up)
  streaming_added_us_per_chunk: 1, // (engine − loop) / chunks ≤ 1 µs
  persisted_send_ratio: 1.5, // one persisted send() ≤ 1.5× a bare single-put transaction
  conversation_ratio: 2, // 1,000 turns ≤ 2× as many bare single-put transactions as messages stored
  turn_trend_ratio: 1.1, // turns 901–1,000 ≤ 1.1× turns 1–100 (mean time per turn)
  routing_original_replies_per_s: 11500, // the original's scenario, replies/s (human messages not counted)
  cold_start_ms: 50, // Chromium: compile + instantiate + AgentWorld.create
  // Not from the issue (the project's own, kept):
  reopen_ratio: 5, // open + first page of a 10,000-message chat ≤ 5× bare open + 50-record read
  memory_growth: 1.1, // session off: native RSS / Node live memory at 10,000 messages ≤ 1.1× at 100
  tool_step_chunk_ratio: 1.1, // per-chunk cost after a tool step ≤ 1.1× without (the issue: "must not change"; 1.1 = this bench's noise tolerance)
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
  // 1-minute load average when the run started (scripts/bench.sh notes it) and now: above the
  // core count, other work shared the machine and the ratios are noisier than usual.
  load_start: existsSync(new URL('loadavg-start.txt', OUT)) ? Number(readFileSync(new URL('loadavg-start.txt', OUT), 'utf8').split(' ')[0]) : null,
  load_end: loadavg()[0],
};

// ---------------------------------------------------------------------------------------------
const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
const ms = (x, d = 1) => `${x.toFixed(d)}`;
const spread = (s, d = 1) => `${ms(s.median, d)} (${ms(s.min, d)}–${ms(s.max, d)})`;
const x = (r) => `${r.toFixed(2)}×`;
const ok = (pass) => (pass ? '✔' : '✘ missed');
const int = (n) => Math.round(n).toLocaleString('en-US');
const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

const checks = [];
const check = (what, pass, figure) => checks.push({ what, pass, figure });

const lines = [];
lines.push(`Measured ${machine.date} on ${machine.nproc} cores (${machine.cpu}), Node ${machine.node}, Chromium ${machine.chromium}; ` +
  `${native.reps} repetitions per figure (more for short streams and reopens, see above), median (min–max); the whole \`make bench\` took ${machine.bench_seconds ?? '?'} s; ` +
  `load average ${machine.load_start ?? '?'} at the start, ${machine.load_end.toFixed(2)} at the end${Math.max(machine.load_start ?? 0, machine.load_end) > machine.nproc ? ' (above the core count: the machine was shared, so the ratios are noisier than usual)' : ''}.`);

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

lines.push('', '**Streaming overhead**: response head → last `sse` chunk callback, engine (one agent, stream on) vs a hand-written fetch + TextDecoder + SSE split loop over the same mock stream; added = (engine − loop) / chunks', '');
const streamRows = [];
for (const [rt, rows] of [['Chromium', chromium.streaming], ['Node', node.streaming]]) {
  for (const r of rows) {
    const added = r.engine_us_per_chunk - r.raw_us_per_chunk;
    const budget = r.n >= 20000 ? BUDGETS.streaming_ratio_20000 : BUDGETS.streaming_ratio_1000;
    streamRows.push([rt, int(r.n), spread(r.engine_ms), spread(r.raw_ms), x(r.ratio), `${r.engine_us_per_chunk.toFixed(2)} / ${r.raw_us_per_chunk.toFixed(2)}`, added.toFixed(2)]);
    check(`streaming ${rt} ${int(r.n)} chunks: engine ≤ ${budget}× loop`, r.ratio <= budget, x(r.ratio));
    check(`streaming ${rt} ${int(r.n)} chunks: added ≤ ${BUDGETS.streaming_added_us_per_chunk} µs/chunk`, added <= BUDGETS.streaming_added_us_per_chunk, `${added.toFixed(2)} µs`);
  }
}
lines.push(table(['runtime', 'chunks', 'engine ms', 'raw JS ms', 'ratio', 'µs/chunk engine / raw', 'added µs/chunk'], streamRows));

lines.push('', '**A tool step and streaming**: the same n-chunk reply (`mock-reply:` of n words) by an agent whose first step calls a tool that answers at once (`mock-tool: ping {}`), vs without the tool; both timed over the streaming step (its response head → last chunk)', '');
const toolRows = [];
for (const [rt, rows] of [['Chromium', chromium.tool_streaming], ['Node', node.tool_streaming]]) {
  for (const r of rows ?? []) {
    toolRows.push([rt, int(r.n), spread(r.plain_ms), spread(r.tool_ms), `${r.plain_us_per_chunk.toFixed(2)} / ${r.tool_us_per_chunk.toFixed(2)}`, x(r.ratio), `${spread(r.tool_reply_ms)} ms`]);
    check(`tool step ${rt} ${int(r.n)} chunks: per-chunk ≤ ${BUDGETS.tool_step_chunk_ratio}× without`, r.ratio <= BUDGETS.tool_step_chunk_ratio, x(r.ratio));
  }
}
lines.push(table(['runtime', 'chunks', 'without tool ms', 'after a tool step ms', 'µs/chunk without / with', 'ratio', 'whole reply with the tool (send → last chunk)'], toolRows));

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
check(`${int(p.turns)}-turn conversation ≤ ${BUDGETS.conversation_ratio}× bare puts`, p.conversation_ms / p.bare_conversation_ms <= BUDGETS.conversation_ratio, x(p.conversation_ms / p.bare_conversation_ms));

// The conversation's time per turn by hundred (mean of each hundred turns), so a trend shows.
const perTurn = p.raw.per_turn;
const hundreds = [];
for (let i = 0; i < perTurn.length; i += 100) {
  const b = perTurn.slice(i, i + 100);
  hundreds.push({ from: i + 1, to: i + b.length, mean_ms: b.reduce((a, v) => a + v, 0) / b.length, median_ms: stats(b).median });
}
const trend = hundreds.at(-1).mean_ms / hundreds[0].mean_ms;
lines.push('', `**Time per turn by hundred** in the ${int(p.turns)}-turn conversation (mean ms per turn; median in brackets)`, '');
lines.push(table(hundreds.map((h) => `${int(h.from)}–${int(h.to)}`).concat(`last ÷ first`),
  [hundreds.map((h) => `${h.mean_ms.toFixed(2)} (${h.median_ms.toFixed(2)})`).concat(x(trend))]));
check(`turns ${int(hundreds.at(-1).from)}–${int(hundreds.at(-1).to)} ≤ ${BUDGETS.turn_trend_ratio}× turns 1–${hundreds[0].to}`, trend <= BUDGETS.turn_trend_ratio, x(trend));
check(`reopen 10,000 ≤ ${BUDGETS.reopen_ratio}× bare (project budget)`, p.reopen.total_ms.median / p.reopen.bare_total_ms.median <= BUDGETS.reopen_ratio, x(p.reopen.total_ms.median / p.reopen.bare_total_ms.median));

lines.push('', `**Routing throughput**: published messages per second (each routed to every agent), zero-latency LLM, memory store, ${int(native.messages_per_rep)} messages per repetition`, '');
lines.push(table(['agents', 'native msg/s', 'Node msg/s', 'native ÷ Node', 'µs per message (native / Node)'],
  native.routing.map((n, i) => {
    const j = node.routing[i];
    return [n.agents, `${int(n.messages_per_s)} (${int(n.min)}–${int(n.max)})`, `${int(j.messages_per_s)} (${int(j.min)}–${int(j.max)})`,
      x(n.messages_per_s / j.messages_per_s), `${n.us_per_message.toFixed(1)} / ${j.us_per_message.toFixed(1)}`];
  })));

const ro = node.routing_original;
lines.push('', `**Routing in the original's scenario**: ${ro.agents} agents, ${int(ro.human_messages)} public human messages (each followed by \`idle()\`: the call queue holds 100 pending calls), one-chunk instant replies (\`custom\` provider), memory storage, session on, a fresh Node process per repetition, timed from the first send to the last \`idle()\``, '');
const roCpu = ro.replies_per_main_cpu_s;
lines.push(table(['replies', 'ms (first send → idle)', 'replies/s', 'per main-thread CPU second (not budgeted)', 'budget'], [[int(ro.replies), spread(ro.ms),
  `${int(ro.replies_per_s.median)} (${int(ro.replies_per_s.min)}–${int(ro.replies_per_s.max)})`,
  roCpu ? `${int(roCpu.median)} (${int(roCpu.min)}–${int(roCpu.max)})` : 'n/a', `≥ ${int(BUDGETS.routing_original_replies_per_s)}`]]));
check(`routing, original's scenario ≥ ${int(BUDGETS.routing_original_replies_per_s)} replies/s`, ro.replies_per_s.median >= BUDGETS.routing_original_replies_per_s, `${int(ro.replies_per_s.median)}/s`);

const nm = native.memory;
const jm = node.memory;
const growth = (a, b) => b / a;
const live = (m) => m.heapUsed + m.external;
// KiB per published message between two samples (the slope), native RSS and Node live memory.
const perMsg = (kibA, kibB, msgsA, msgsB) => (kibB - kibA) / (msgsB - msgsA);
const nMsgs = (m) => [m.messages_100, m.messages_1k, m.messages_10k];
lines.push('', '**Memory** from the start to 10,000 published messages (10 agents; session off = nothing stored, only the engine\'s bounded windows stay; session on = the memory store keeps every message, so it grows by design: the slope is what to watch)', '');
// `toKib`: the samples' unit to KiB (native reports KiB, Node bytes).
const memRow = (what, at, msgs, fmt, toKib) => [what, fmt(at[0]), fmt(at[1]), fmt(at[2]), fmt(at[3]), x(growth(at[1], at[3])),
  `${perMsg(toKib(at[1]), toKib(at[2]), msgs[0], msgs[1]).toFixed(2)} / ${perMsg(toKib(at[2]), toKib(at[3]), msgs[1], msgs[2]).toFixed(2)}`];
const kib = (k) => `${int(k)} KiB`;
const nativeAt = (m) => [m.rss_kib_start, m.rss_kib_100, m.rss_kib_1k, m.rss_kib_10k];
const nodeAt = (m) => [m.start, m.at100, m.at1k, m.at10k].map(live);
const nodeMsgs = (m) => [m.at100.messages, m.at1k.messages, m.at10k.messages];
lines.push(table(['process', 'start', 'at ~100', 'at 1,000', 'at 10,000', 'growth ~100 → 10,000', 'KiB per message (100 → 1,000 / 1,000 → 10,000)'], [
  memRow('native VmRSS, session off', nativeAt(nm.session_off), nMsgs(nm.session_off), kib, (k) => k),
  memRow('native VmRSS, session on', nativeAt(nm.session_on), nMsgs(nm.session_on), kib, (k) => k),
  memRow('Node live: heapUsed + external (wasm memory), session off', nodeAt(jm.session_off), nodeMsgs(jm.session_off), mib, (b) => b / 1024),
  memRow('Node live, session on', nodeAt(jm.session_on), nodeMsgs(jm.session_on), mib, (b) => b / 1024),
  ['Node RSS (V8 heap reserved: heapTotal), session off', mib(jm.session_off.start.rss), `${mib(jm.session_off.at100.rss)} (${mib(jm.session_off.at100.heapTotal)})`, `${mib(jm.session_off.at1k.rss)} (${mib(jm.session_off.at1k.heapTotal)})`, `${mib(jm.session_off.at10k.rss)} (${mib(jm.session_off.at10k.heapTotal)})`, x(growth(jm.session_off.at100.rss, jm.session_off.at10k.rss)), ''],
]));
check(`native RSS flat (session off, 100 → 10,000 ≤ ${BUDGETS.memory_growth}×)`, growth(nm.session_off.rss_kib_100, nm.session_off.rss_kib_10k) <= BUDGETS.memory_growth, x(growth(nm.session_off.rss_kib_100, nm.session_off.rss_kib_10k)));
check(`Node live memory flat (session off, 100 → 10,000 ≤ ${BUDGETS.memory_growth}×)`, growth(live(jm.session_off.at100), live(jm.session_off.at10k)) <= BUDGETS.memory_growth, x(growth(live(jm.session_off.at100), live(jm.session_off.at10k))));

const cc = chromium.cold_start;
const nc = node.cold_start;
const [hPkg, hEmpty] = hyper.results;
const hs = (r) => ({ median: 1000 * r.median, min: 1000 * r.min, max: 1000 * r.max });
lines.push('', `**Cold start**: compile + instantiate the module and \`AgentWorld.create\`. Chromium's baseline is compiling the same ${kb(cc.wasm_bytes)} module alone (fresh bytes: a nonce in a custom section), what any module of this size and shape costs before it runs; Node's is an empty module`, '');
lines.push(table(['runtime', 'instantiate', 'create', 'total', 'baseline', 'ratio'], [
  ['Chromium page (from fetched bytes; IndexedDB)', `${spread(cc.init_ms)} ms`, `${spread(cc.create_ms)} ms`, `${spread(cc.total_ms)} ms`, `${spread(cc.compile_ms)} ms (compile alone)`, x(cc.ratio)],
  ['Node (`require` pkg/nodejs; memory)', `${spread(nc.load_ms)} ms`, `${spread(nc.create_ms)} ms`, `${spread(nc.total_ms)} ms`, `${spread(nc.empty_ms, 2)} ms (empty module)`, x(nc.ratio)],
  ['Node whole process (hyperfine, 10 runs)', '', '', `${spread(hs(hPkg))} ms`, `${spread(hs(hEmpty))} ms (empty module)`, x(hPkg.median / hEmpty.median)],
]));
check(`cold start Chromium ≤ ${BUDGETS.cold_start_ms} ms`, cc.total_ms.median <= BUDGETS.cold_start_ms, `${ms(cc.total_ms.median)} ms (${x(cc.ratio)} compile alone)`);

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
