// Run by tests/runtimes/runtimes.test.mjs under Deno: the `web` build, loaded exactly as a Deno
// user would (its default init() fetches the .wasm next to the glue through a file: URL).
import init, { version } from '../../pkg/web/agent_world_wasm.js';

await init();
console.log(JSON.stringify({ runtime: `deno ${Deno.version.deno}`, version: version() }));
