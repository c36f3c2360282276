// A dedicated module Worker started by tests/runtimes/matrix_worker.html: runs the matrix scenario
// with the `web` build and posts the report back to the page.
import init, { AgentWorld } from '/pkg/web/agent_world_wasm.js';
import { runScenario } from '/tests/runtimes/scenario.mjs';

self.onmessage = async (event) => {
  try {
    await init();
    const report = await runScenario({ AgentWorld, mockUrl: event.data.mockUrl, log: (l) => console.log(l) });
    report.runtime = 'chromium-worker';
    self.postMessage(report);
  } catch (e) {
    self.postMessage({ failure: String((e && e.stack) || e) });
  }
};
