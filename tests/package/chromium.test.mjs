// The packed package in headless Chromium with no build step: a plain page whose import map
// sends the bare name "agent-world-wasm" where the exports map's `browser` condition points
// (what an import-map generator does), and a dedicated module Worker (workers have no import
// maps: it imports that same resolved URL). Both call `await init()`, as the README says for
// the web build, then run the two-agent streamed conversation against the mock LLM.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertConversation } from './assert-conversation.mjs';
import { crateVersion, freshProject, pack, resolveExport } from './tarball.mjs';
import { launchChromium, loadAndWait, serveDir } from './browser.mjs';

let mock, server, browser;
before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  const dir = await freshProject((await pack()).tarball, 'chromium');
  const manifest = JSON.parse(await readFile(join(dir, 'node_modules/agent-world-wasm/package.json'), 'utf8'));
  const entry = `/node_modules/agent-world-wasm/${resolveExport(manifest, ['browser', 'import']).slice(2)}`;
  await copyFile(new URL('conversation.mjs', import.meta.url), join(dir, 'conversation.mjs'));
  const run = (runtime, post) => `
  const mockUrl = new URLSearchParams(location.search).get("mock");
  try {
    await init();
    const report = await runConversation({ AgentWorld, version, mockUrl });
    report.runtime = ${JSON.stringify(runtime)};
    ${post}(report);
  } catch (e) {
    ${post}({ failure: String((e && e.stack) || e) });
  }`;
  await writeFile(join(dir, 'page.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">${JSON.stringify({ imports: { 'agent-world-wasm': entry } })}</script>
<script type="module">
  import init, { AgentWorld, version } from "agent-world-wasm";
  import { runConversation } from "/conversation.mjs";
  ${run('chromium-page', 'globalThis.__report = ')}
</script>`);
  await writeFile(join(dir, 'worker.js'), `
import init, { AgentWorld, version } from ${JSON.stringify(entry)};
import { runConversation } from "/conversation.mjs";
${run('chromium-worker', 'self.postMessage')}`);
  await writeFile(join(dir, 'worker.html'), `<!doctype html><meta charset="utf-8">
<script type="module">
  const worker = new Worker("/worker.js" + location.search, { type: "module" });
  worker.onmessage = (event) => { globalThis.__report = event.data; };
  worker.onerror = (event) => { globalThis.__report = { failure: "worker error: " + event.message }; };
</script>`);
  server = await serveDir(dir);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await mock?.close();
});

for (const [name, file] of [['chromium-page', 'page.html'], ['chromium-worker', 'worker.html']]) {
  test(`${name}: the web build by package name, after await init()`, { timeout: 90_000 }, async () => {
    const { value: report, errors } = await loadAndWait(browser,
      `${server.url}/${file}?mock=${encodeURIComponent(mock.url)}`, () => globalThis.__report);
    assert.deepEqual(errors, [], 'no uncaught page errors');
    assert.equal(report.failure, undefined, report.failure);
    assert.equal(report.runtime, name);
    assertConversation(report, name, crateVersion);
  });
}
