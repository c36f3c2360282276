// A Cloudflare Worker (module syntax) run under workerd by miniflare in
// tests/runtimes/runtimes.test.mjs. workerd cannot fetch files, so the .wasm is imported as a
// compiled module and handed to init(), as a Worker bundling the `web` build does.
import init, { version } from './agent_world_wasm.js';
import wasmModule from './agent_world_wasm_bg.wasm';

export default {
  async fetch() {
    await init({ module_or_path: wasmModule });
    return Response.json({ runtime: 'workerd', version: version() });
  },
};
