// Shared by every suite that drives a browser (tests/e2e, tests/runtimes, tests/package, bench):
// Debian's headless Chromium through playwright-core, and a static file server on 127.0.0.1.
import http from 'node:http';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

/** Debian's Chromium, headless, with nothing that reaches the network on its own. */
export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** A same-origin page of `baseUrl` (the demo server's `__blank`) with nothing on it but the
 * package's web build, loaded and initialised as `window.aww`. */
export async function blankPage(context, baseUrl) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${baseUrl}__blank`);
  await page.evaluate(async () => {
    const mod = await import('/pkg/web/agent_world_wasm.js');
    await mod.default();
    window.aww = mod;
  });
  return { page, errors };
}

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8', '.json': 'application/json', '.css': 'text/css' };

/** Serves the files of `dir` on 127.0.0.1 (`/` → index.html); with `only`, just the paths that
 * start with one of those prefixes. Resolves { url, close }. */
export async function serveDir(dir, { only } = {}) {
  const srv = http.createServer(async (req, res) => {
    let path;
    try {
      path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    } catch {
      return res.writeHead(400).end('bad request'); // bad percent-encoding must not kill a test run
    }
    if (path.endsWith('/')) path += 'index.html';
    const type = TYPES[path.slice(path.lastIndexOf('.'))];
    // Prefixes end with '/', so a sibling folder ('/pkg/web-x/') never matches '/pkg/web/'.
    const allowed = !only || only.some((p) => path.startsWith(p.endsWith('/') ? p : `${p}/`));
    if (path.includes('..') || !type || !allowed) return res.writeHead(404).end('not found');
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
