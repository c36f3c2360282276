// The built `web` package in the non-browser runtimes users deploy to: Deno (npm package
// `deno`) and Cloudflare workerd (npm package `miniflare`). Same assertions in each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';

const root = new URL('../../', import.meta.url);
const crateVersion = (await readFile(new URL('Cargo.toml', root), 'utf8'))
  .match(/^version = "([^"]+)"/m)[1];

test('the web build runs in Deno', async () => {
  const deno = new URL('.tools/deno/node_modules/.bin/deno', root).pathname;
  const script = new URL('tests/runtimes/deno_smoke.js', root).pathname;
  const { stdout } = await promisify(execFile)(deno, ['run', '--quiet', '--no-prompt',
    `--allow-read=${new URL('pkg/', root).pathname}`, script], { timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop());
  assert.match(out.runtime, /^deno \d/);
  assert.equal(out.version, crateVersion);
});

test('the web build runs in Cloudflare workerd', async () => {
  // What a worker deploys: the npm package's web entry, whose glue has wasm-bindgen's JS
  // snippets written in (workerd takes an explicit module list; pkg/web imports snippets/).
  const pkg = new URL('pkg/npm/web/', root);
  const mf = new Miniflare({
    compatibilityDate: '2025-01-01',
    modules: [
      { type: 'ESModule', path: 'worker.js',
        contents: await readFile(new URL('tests/runtimes/workerd_worker.js', root), 'utf8') },
      { type: 'ESModule', path: 'agent_world_wasm.js',
        contents: await readFile(new URL('agent_world_wasm.js', pkg), 'utf8') },
      { type: 'CompiledWasm', path: 'agent_world_wasm_bg.wasm',
        contents: await readFile(new URL('agent_world_wasm_bg.wasm', pkg)) },
    ],
  });
  try {
    const res = await mf.dispatchFetch('http://localhost/');
    const out = await res.json();
    assert.equal(out.runtime, 'workerd');
    assert.equal(out.version, crateVersion);
  } finally {
    await mf.dispose();
  }
});
