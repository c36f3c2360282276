// The demo's server: serves www/ at / and the built package pkg/ at /pkg/, and starts the local
// mock LLM, so the demo works with no API key and no network. The app is fully static: this
// server only hands out files (any static host would do); the mock stands in for a provider.
//
//   node scripts/demo-server.mjs [--port 8080] [--mock-port 0]
//
// Also imported by the e2e tests: `startDemo({port: 0})`.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockLlm } from '../tests/mock-llm/server.mjs';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ts': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8',
};

/** Maps a URL path to a file under www/ or pkg/, refusing anything that escapes them. */
function fileFor(pathname) {
  const [base, rest] = pathname.startsWith('/pkg/')
    ? [join(root, 'pkg'), pathname.slice('/pkg/'.length)]
    : [join(root, 'www'), pathname.slice(1) || 'index.html'];
  const file = normalize(join(base, decodeURIComponent(rest)));
  return file.startsWith(base) ? file : null;
}

/**
 * Starts the static server and the mock LLM on 127.0.0.1.
 * @param {{port?: number, mockPort?: number}} options
 * @returns {Promise<{url: string, mockUrl: string, close: () => Promise<void>}>}
 */
export async function startDemo({ port = 0, mockPort = 0 } = {}) {
  const mock = await startMockLlm({ port: mockPort });
  const server = createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://localhost');
    if (pathname === '/demo-config.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ mockBaseUrl: mock.url }));
      return;
    }
    let file = fileFor(pathname);
    try {
      if (file && (await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = file && (await readFile(file));
      res.writeHead(200, {
        'content-type': types[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-cache',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(port, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return {
    url,
    mockUrl: mock.url,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((ok) => server.close(ok));
      await mock.close();
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const demo = await startDemo({ port: arg('--port', 8080), mockPort: arg('--mock-port', 0) });
  console.log(`agent-world-wasm demo: open ${demo.url}`);
  console.log(`(mock LLM at ${demo.mockUrl}; press Ctrl+C to stop)`);
  const stop = async () => { await demo.close(); process.exit(0); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
