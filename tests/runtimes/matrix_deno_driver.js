// Run by tests/runtimes/matrix-deno.test.mjs: the matrix scenario in Deno with the `web` build.
// Usage: deno run --allow-read=<pkg/>,<tests/> --allow-net=127.0.0.1 matrix_deno_driver.js <mockUrl>
import init, { AgentWorld } from '../../pkg/web/agent_world_wasm.js';
import { runScenario } from './scenario.mjs';

await init();
const report = await runScenario({ AgentWorld, mockUrl: Deno.args[0], log: (l) => console.error(l) });
report.runtime = `deno ${Deno.version.deno}`;
console.log(JSON.stringify(report));
