// The packed package in Cloudflare workerd (miniflare): a fresh project with the tarball
// installed and a Worker that imports it BY NAME, bundled the way wrangler bundles (the
// conditions `workerd`, `worker`, `browser`; a `.wasm` import becomes a CompiledWasm module).
// The bundler is rolldown (a pinned devDependency, the one vite uses) standing in for
// wrangler's esbuild. The Worker runs the two-agent streamed conversation against the mock LLM, no init().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Miniflare } from 'miniflare';
import { rolldown } from 'rolldown';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertConversation } from './assert-conversation.mjs';
import { crateVersion, freshProject, pack } from './tarball.mjs';

let mock, dir;
before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  dir = await freshProject((await pack()).tarball, 'workerd');
});
after(async () => { await mock?.close(); });

/** Bundles `entry` like wrangler: returns the Worker's code and its CompiledWasm modules. */
async function bundleLikeWrangler(entry) {
  const wasm = [];
  const bundle = await rolldown({
    input: entry,
    platform: 'browser',
    resolve: { conditionNames: ['workerd', 'worker', 'browser', 'import', 'default'] },
    plugins: [{
      name: 'wasm-modules',
      resolveId(source, importer) {
        if (!source.endsWith('.wasm') || !importer) return null;
        const path = join(dirname(importer), source);
        wasm.push({ name: basename(path), path });
        return { id: `./${basename(path)}`, external: true };
      },
    }],
  });
  const { output } = await bundle.generate({ format: 'esm' });
  await bundle.close();
  assert.equal(output.length, 1, 'one chunk');
  return { code: output[0].code, wasm };
}

test('workerd: a Worker importing "agent-world-wasm" by name is ready without init()', async () => {
  await writeFile(join(dir, 'worker.js'), `
import { AgentWorld, version } from "agent-world-wasm";
import { runConversation } from ${JSON.stringify(new URL('conversation.mjs', import.meta.url).pathname)};
export default {
  async fetch(request) {
    try {
      const mockUrl = new URL(request.url).searchParams.get("mock");
      return Response.json(await runConversation({ AgentWorld, version, mockUrl }));
    } catch (e) {
      return Response.json({ failure: String((e && e.stack) || e) });
    }
  },
};
`);
  const { code, wasm } = await bundleLikeWrangler(join(dir, 'worker.js'));
  assert.deepEqual(wasm.map((w) => w.path), [join(dir, 'node_modules/agent-world-wasm/web/agent_world_wasm_bg.wasm')],
    'the workerd entry imports the web build\'s .wasm');
  const mf = new Miniflare({
    compatibilityDate: '2025-01-01',
    modules: [
      { type: 'ESModule', path: 'worker.js', contents: code },
      ...await Promise.all(wasm.map(async (w) => ({ type: 'CompiledWasm', path: w.name, contents: await readFile(w.path) }))),
    ],
  });
  try {
    const res = await mf.dispatchFetch(`http://localhost/?mock=${encodeURIComponent(mock.url)}`);
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 2000));
    assertConversation(JSON.parse(text), 'workerd', crateVersion);
  } finally {
    await mf.dispose();
  }
});
