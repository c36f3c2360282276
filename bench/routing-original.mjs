// One repetition of the routing case in the original agent-world's own scenario shape, in a
// fresh Node process (bench/node.mjs runs it once per repetition): 3 agents on a `custom`
// provider that answers at once with one chunk, memory storage, session mode on (the
// default), 200 public human messages, each followed by `idle()` (every agent answers every
// message: 600 replies). Not sent back to back: the engine's call queue holds at most 100
// pending calls (spec §7, `queue_full`), so 200 × 3 calls at once would be refused, not
// answered. Timed from the first send to the last idle; the figure is replies per second, the
// human messages not counted. `main_ms` is the CPU time of the main thread (JS and wasm) over
// the same window, from Linux's /proc/thread-self/schedstat (null elsewhere): on a shared,
// loaded machine the wall time also counts the time the process waited for a core, and the
// two together tell a slower engine from a busier machine.
//   node bench/routing-original.mjs      prints one JSON line
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { HUMAN_MESSAGE, instantProvider } from './common.mjs';

const AGENTS = 3;
const HUMAN_MESSAGES = 200;

const { AgentWorld } = createRequire(import.meta.url)('../pkg/nodejs/agent_world_wasm.js');
const world = await AgentWorld.create({ name: 'Bench Original Routing', storage: 'memory' });
world.registerProvider(instantProvider);
for (let i = 0; i < AGENTS; i++) await world.addAgent({ name: `agent-${i}`, provider: 'custom', model: 'instant' });
let replies = 0;
let human = 0;
world.on('message', (m) => {
  if (m.sender === 'HUMAN') human++;
  else replies++;
});
/** Nanoseconds this thread ran on a CPU, or null where the kernel does not say. */
const threadNs = () => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
};
const cpu0 = threadNs();
const t0 = performance.now();
for (let i = 0; i < HUMAN_MESSAGES; i++) {
  await world.send(HUMAN_MESSAGE);
  await world.idle();
}
const ms = performance.now() - t0;
const cpu1 = threadNs();
const mainMs = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / 1e6;
// Every agent answers every public human message: anything else means the case measured
// something other than what it says.
if (human !== HUMAN_MESSAGES || replies !== AGENTS * HUMAN_MESSAGES) {
  throw new Error(`original routing: ${human} human messages and ${replies} replies published, expected ${HUMAN_MESSAGES} and ${AGENTS * HUMAN_MESSAGES}`);
}
console.log(JSON.stringify({ agents: AGENTS, human, replies, ms, replies_per_s: replies / (ms / 1000), main_ms: mainMs }));
