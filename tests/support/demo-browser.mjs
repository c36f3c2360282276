// The set-up every Chromium e2e file of the demo shares: the demo server (static files and its
// local mock LLM) and one Chromium, started before the file's tests and closed after them.
import { before, after } from 'node:test';
import { launchChromium } from './chromium.mjs';
import { startDemo } from '../../scripts/demo-server.mjs';

/** Registers the file's `before`/`after` hooks; returns `{demo, browser}`, filled in by
 * `before` (read them inside tests, not at import time). */
export function demoAndBrowser() {
  const env = { demo: null, browser: null };
  before(async () => {
    env.demo = await startDemo({ port: 0 });
    env.browser = await launchChromium();
  });
  after(async () => {
    await env.browser?.close();
    await env.demo?.close();
  });
  return env;
}
