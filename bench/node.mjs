// `make bench`, Node part (run by scripts/bench.sh): streaming overhead (with and without a
// tool step), routing throughput (and the original's scenario, bench/routing-original.mjs),
// memory from the start to 10,000 messages, and cold start, through pkg/nodejs.
//   node bench/node.mjs --mock URL --reps 5 --out bench/out/node.json
//   node --expose-gc bench/node.mjs --memory on|off      (child mode: one JSON line)
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stats, streamingBench, toolStreamBench, routingWorld } from './common.mjs';

const require = createRequire(import.meta.url);
const SELF = fileURLToPath(import.meta.url);
const COLD = fileURLToPath(new URL('./coldstart-node.mjs', import.meta.url));
const ORIGINAL = fileURLToPath(new URL('./routing-original.mjs', import.meta.url));
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const log = (line) => console.error(`bench node: ${line}`);
const ROUTING_MESSAGES = 10000;

const { AgentWorld } = require('../pkg/nodejs/agent_world_wasm.js');

/**
 * Child mode: RSS and heap at the start (world and agents made) and after 100, 1,000 and
 * 10,000 published messages (10 agents), after a full GC. `heapUsed` (live JS objects) and `external` (which holds the wasm linear memory) are the
 * engine's footprint; RSS also holds V8's heap reservation (`heapTotal`), which V8 grows with
 * the allocation rate up to its young-generation limit whatever is live.
 */
async function memory(session) {
  const r = await routingWorld({ AgentWorld, agents: 10 });
  if (!session) await r.world.setSessionMode(false);
  const sample = () => {
    globalThis.gc?.();
    const m = process.memoryUsage();
    return { messages: r.published(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
  };
  const start = sample();
  await r.drive(100);
  const at100 = sample();
  await r.drive(1000);
  const at1k = sample();
  await r.drive(10000);
  const at10k = sample();
  return { session, agents: 10, start, at100, at1k, at10k };
}

async function routing(agents, reps) {
  const rates = [];
  const raw = [];
  for (let i = 0; i < reps; i++) {
    const r = await routingWorld({ AgentWorld, agents });
    const t0 = performance.now();
    const human = await r.drive(ROUTING_MESSAGES);
    const ms = performance.now() - t0;
    raw.push({ published: r.published(), human, ms });
    rates.push(r.published() / (ms / 1000));
    // The memory store is shared by the module instance: leave it as found.
    const id = r.world.id;
    r.world.free();
    await AgentWorld.delete(id);
  }
  const s = stats(rates);
  log(`routing ${agents} agents: ${s.median.toFixed(0)} messages/s`);
  return { agents, messages_per_s: s.median, min: s.min, max: s.max, us_per_message: 1e6 / s.median, reps: raw };
}

/** The original's scenario (bench/routing-original.mjs), a fresh Node process per repetition. */
function originalRouting(reps) {
  const runs = [];
  for (let i = 0; i < reps; i++) runs.push(JSON.parse(execFileSync(process.execPath, [ORIGINAL], { encoding: 'utf8' })));
  const s = stats(runs.map((r) => r.replies_per_s));
  // Replies per second of the main thread's CPU time (Linux only, else null): on a shared
  // machine the wall time also counts waiting for a core, this does not.
  const cpu = runs.every((r) => typeof r.main_ms === 'number' && r.main_ms > 0)
    ? stats(runs.map((r) => r.replies / (r.main_ms / 1000))) : null;
  log(`original's scenario (3 agents, 200 human messages, fresh process): ${s.median.toFixed(0)} replies/s${cpu ? `, ${cpu.median.toFixed(0)} per main-thread CPU second` : ''}`);
  return { agents: runs[0].agents, human_messages: runs[0].human, replies: runs[0].replies, replies_per_s: s, replies_per_main_cpu_s: cpu, ms: stats(runs.map((r) => r.ms)), reps: runs };
}

function coldStart(reps) {
  const run = (mode) => JSON.parse(execFileSync(process.execPath, [COLD, mode], { encoding: 'utf8' }));
  run('pkg');
  const pkg = [];
  const empty = [];
  for (let i = 0; i < reps; i++) {
    pkg.push(run('pkg'));
    empty.push(run('empty'));
  }
  const field = (list, k) => stats(list.map((x) => x[k]));
  const out = {
    load_ms: field(pkg, 'load_ms'),
    create_ms: field(pkg, 'create_ms'),
    total_ms: field(pkg, 'total_ms'),
    empty_ms: field(empty, 'total_ms'),
    raw: { pkg, empty },
  };
  out.ratio = out.total_ms.median / out.empty_ms.median;
  log(`cold start: ${out.total_ms.median.toFixed(1)} ms vs empty module ${out.empty_ms.median.toFixed(2)} ms`);
  return out;
}

if (arg('--memory')) {
  console.log(JSON.stringify(await memory(arg('--memory') === 'on')));
} else {
  const mockUrl = arg('--mock');
  const reps = Number(arg('--reps', 5));
  if (!mockUrl) throw new Error('bench/node.mjs needs --mock URL (scripts/bench.sh starts the mock LLM)');
  const result = { runtime: `node ${process.version}` };
  result.streaming = await streamingBench({ AgentWorld, mockUrl, sizes: [1000, 20000], reps, log });
  result.tool_streaming = await toolStreamBench({ AgentWorld, mockUrl, sizes: [1000, 20000], reps, log });
  result.routing_original = originalRouting(Math.max(reps, 7));
  result.routing = [];
  for (const agents of [3, 10, 100]) result.routing.push(await routing(agents, reps));
  const child = (mode) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', SELF, '--memory', mode], { encoding: 'utf8' }));
  result.memory = { session_off: child('off'), session_on: child('on') };
  for (const [k, m] of Object.entries(result.memory)) log(`memory (${k}): live ${((m.at100.heapUsed + m.at100.external) / 2 ** 20).toFixed(1)} MiB at 100 → ${((m.at10k.heapUsed + m.at10k.external) / 2 ** 20).toFixed(1)} MiB at 10,000 messages`);
  result.cold_start = coldStart(Math.max(reps, 7));
  writeFileSync(arg('--out', '/dev/stdout'), JSON.stringify(result, null, 1));
}
