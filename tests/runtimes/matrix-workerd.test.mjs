// The provider × runtime matrix (tests/runtimes/scenario.mjs) in Cloudflare workerd (miniflare),
// through the package's web entry. The mock URL travels in the request's query string.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Miniflare } from 'miniflare';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertReport } from './assert-report.mjs';

const root = new URL('../../', import.meta.url);
let mock;
before(async () => { mock = await startMockLlm({ port: 0, delayMs: 0 }); });
after(async () => { await mock?.close(); });

test('matrix: every provider and fault through the engine in workerd', { timeout: 120_000 }, async () => {
  // What a worker deploys: the npm package's web entry, whose glue has wasm-bindgen's JS
  // snippets written in (workerd takes an explicit module list; pkg/web imports snippets/).
  const pkg = new URL('pkg/npm/web/', root);
  const here = new URL('tests/runtimes/', root);
  // No option is needed for the Worker to reach the mock on 127.0.0.1: with miniflare
  // 4.20260310.0 (the installed one) workerd's fetch() to a loopback address just works. Should a
  // later version refuse it, miniflare's `outboundService` option is the hook to route it.
  const mf = new Miniflare({
    compatibilityDate: '2025-01-01',
    modules: [
      { type: 'ESModule', path: 'worker.js', contents: await readFile(new URL('matrix_workerd_worker.js', here), 'utf8') },
      { type: 'ESModule', path: 'scenario.mjs', contents: await readFile(new URL('scenario.mjs', here), 'utf8') },
      { type: 'ESModule', path: 'agent_world_wasm.js', contents: await readFile(new URL('agent_world_wasm.js', pkg), 'utf8') },
      { type: 'CompiledWasm', path: 'agent_world_wasm_bg.wasm', contents: await readFile(new URL('agent_world_wasm_bg.wasm', pkg)) },
    ],
  });
  try {
    const res = await mf.dispatchFetch(`http://localhost/?mock=${encodeURIComponent(mock.url)}`);
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 2000));
    const report = JSON.parse(text);
    assert.equal(report.runtime, 'workerd');
    assertReport(report, 'workerd');
  } finally {
    await mf.dispose();
  }
});
