// Ring 5: the demo in real headless Chromium (Debian's), driven by playwright-core, against the
// same server `make demo` runs. Screenshots go to test-output/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startDemo } from '../../scripts/demo-server.mjs';

const out = new URL('../../test-output/', import.meta.url);
mkdirSync(out, { recursive: true });
let demo, browser;

before(async () => {
  demo = await startDemo({ port: 0 });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

test('the demo loads the wasm module and streams a reply from the mock', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(demo.url);
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'done',
    null, { timeout: 15_000 });
  const version = await page.textContent('#version');
  assert.match(version, /^\d+\.\d+\.\d+/);
  const reply = await page.textContent('#reply');
  assert.ok(reply.length > 20, `reply too short: ${reply}`);
  await page.screenshot({ path: new URL('demo-loaded.png', out).pathname, fullPage: true });
  assert.deepEqual(errors, []);
});
