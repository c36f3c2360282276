// The provider × runtime matrix (tests/runtimes/scenario.mjs) in headless Chromium (Debian's,
// driven by playwright-core): in a page and in a dedicated module Worker, through pkg/web.
// A tiny static server (127.0.0.1 only) serves pkg/ and tests/runtimes/; the mock LLM runs on
// another port, so every call is cross-origin and goes through the mock's CORS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, serveDir } from '../support/chromium.mjs';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertReport } from './assert-report.mjs';

const root = new URL('../../', import.meta.url);
let mock, server, base, browser;

before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  server = await serveDir(new URL(root).pathname, { only: ['/pkg/web/', '/tests/runtimes/'] });
  base = server.url;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await mock?.close();
});

async function runIn(pagePath) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${base}${pagePath}?mock=${encodeURIComponent(mock.url)}`);
    await page.waitForFunction(() => globalThis.__report, null, { timeout: 90_000 });
    const report = await page.evaluate(() => globalThis.__report);
    assert.deepEqual(errors, [], 'no uncaught page errors');
    return report;
  } finally {
    await page.close();
  }
}

test('matrix: every provider and fault through the engine in a Chromium page', { timeout: 120_000 }, async () => {
  const report = await runIn('/tests/runtimes/matrix_page.html');
  assert.equal(report.failure, undefined, report.failure);
  assert.equal(report.runtime, 'chromium-page');
  assertReport(report, 'chromium-page');
});

test('matrix: every provider and fault through the engine in a Chromium dedicated worker', { timeout: 120_000 }, async () => {
  const report = await runIn('/tests/runtimes/matrix_worker.html');
  assert.equal(report.failure, undefined, report.failure);
  assert.equal(report.runtime, 'chromium-worker');
  assertReport(report, 'chromium-worker');
});
