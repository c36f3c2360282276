// A Cloudflare Worker (module syntax) run under workerd by tests/runtimes/matrix-workerd.test.mjs:
// GET /?mock=<mock URL> runs the matrix scenario and answers its report as JSON.
import init, { AgentWorld } from './agent_world_wasm.js';
import wasmModule from './agent_world_wasm_bg.wasm';
import { runScenario } from './scenario.mjs';

export default {
  async fetch(request) {
    const mockUrl = new URL(request.url).searchParams.get('mock');
    await init({ module_or_path: wasmModule });
    const report = await runScenario({ AgentWorld, mockUrl });
    report.runtime = 'workerd';
    return Response.json(report);
  },
};
