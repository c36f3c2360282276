// The provider × runtime matrix (tests/runtimes/scenario.mjs) in headless Chromium (Debian's,
// driven by playwright-core): in a page and in a dedicated module Worker, through pkg/web.
// A tiny static server (127.0.0.1 only) serves pkg/ and tests/runtimes/; the mock LLM runs on
// another port, so every call is cross-origin and goes through the mock's CORS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertReport } from './assert-report.mjs';

const root = new URL('../../', import.meta.url);
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8', '.json': 'application/json' };
let mock, server, base, browser;

function startStatic() {
  const srv = http.createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const allowed = (path.startsWith('/pkg/web/') || path.startsWith('/tests/runtimes/')) && !path.includes('..');
    const type = TYPES[path.slice(path.lastIndexOf('.'))];
    if (!allowed || !type) return res.writeHead(404).end('not found');
    try {
      const body = await readFile(new URL(`.${path}`, root));
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  srv.listen(0, '127.0.0.1');
  return once(srv, 'listening').then(() => srv);
}

before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  server = await startStatic();
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
});
after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r()));
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
