// One cold start in a fresh Node process (bench/node.mjs runs it several times, and
// scripts/bench.sh runs it under hyperfine for the whole-process figure).
//   node bench/coldstart-node.mjs pkg     load pkg/nodejs (read + compile + instantiate the
//                                         .wasm), then AgentWorld.create (memory store)
//   node bench/coldstart-node.mjs empty   compile + instantiate an empty wasm module (baseline)
// Prints one JSON line of milliseconds.
import { createRequire } from 'node:module';

// The smallest valid module: magic number and version, no sections.
const EMPTY_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);

const mode = process.argv[2];
const t0 = performance.now();
if (mode === 'pkg') {
  const { AgentWorld } = createRequire(import.meta.url)('../pkg/nodejs/agent_world_wasm.js');
  const t1 = performance.now();
  await AgentWorld.create({ name: 'Cold Start' });
  const t2 = performance.now();
  console.log(JSON.stringify({ load_ms: t1 - t0, create_ms: t2 - t1, total_ms: t2 - t0 }));
} else if (mode === 'empty') {
  new WebAssembly.Instance(new WebAssembly.Module(EMPTY_MODULE));
  console.log(JSON.stringify({ total_ms: performance.now() - t0 }));
} else {
  console.error('usage: coldstart-node.mjs pkg|empty');
  process.exit(2);
}
