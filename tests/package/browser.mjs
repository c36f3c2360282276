// Helpers of the packed-package browser tests: a static server for a directory (127.0.0.1 only)
// and headless Chromium (Debian's, driven by playwright-core) that loads a page and waits for
// the `globalThis.__report` it sets.
import http from 'node:http';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8', '.json': 'application/json', '.css': 'text/css' };

/** Serves `dir` on 127.0.0.1; resolves { url, close }. */
export async function serveDir(dir) {
  const srv = http.createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.endsWith('/')) path += 'index.html';
    const type = TYPES[path.slice(path.lastIndexOf('.'))];
    if (path.includes('..') || !type) return res.writeHead(404).end('not found');
    try {
      const body = await readFile(join(dir, path));
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    close: () => { srv.closeAllConnections(); return new Promise((r) => srv.close(r)); },
  };
}

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** Opens `url`, waits for `check` (a page function) to return a truthy value, returns it. */
export async function loadAndWait(browser, url, check, timeout = 60_000) {
  const page = await browser.newPage();
  const errors = [];
  // An uncaught page error fails the wait at once rather than after `timeout`.
  let pageFailed;
  const failed = new Promise((_, reject) => { pageFailed = reject; });
  failed.catch(() => {}); // an error after the wait is reported through `errors`
  page.on('pageerror', (e) => {
    errors.push(e.message);
    pageFailed(new Error(`uncaught page error: ${e.message}`));
  });
  try {
    await page.goto(url);
    const waiting = page.waitForFunction(check, null, { timeout });
    waiting.catch(() => {}); // lost the race to a page error
    const handle = await Promise.race([waiting, failed]).catch((e) => {
      throw new Error(`${e.message}; page errors: ${JSON.stringify(errors)}`);
    });
    const value = await handle.jsonValue();
    return { value, errors };
  } finally {
    await page.close();
  }
}
