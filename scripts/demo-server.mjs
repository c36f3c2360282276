// The demo's server: serves www/ at / and the built package pkg/ at /pkg/, and starts the local
// mock LLM, so the demo works with no API key and no network. The app is fully static: this
// server only hands out files (any static host would do); the mock stands in for a provider.
//
//   node scripts/demo-server.mjs [--port 8080] [--mock-port 0] [--root DIR]
//
// Also imported by the e2e tests: `startDemo({port: 0})`.
//
// It listens on 127.0.0.1 only, but any web page the user opens can still send it requests:
// a hostile path answers 400 or 404 and the server keeps serving, and nothing outside www/ and
// pkg/ is ever read (no `..`, no encoded separators, no sibling folder such as `www-private`,
// no symlink that leads out).
import { createServer } from 'node:http';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockLlm } from '../tests/mock-llm/server.mjs';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ts': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8',
};

/** True when `path` is `base` itself or inside it (separator-aware: `www-private` is not in `www`). */
function inside(base, path) {
  const rel = relative(base, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/**
 * Maps a URL path to a file under `root`/www or `root`/pkg. Returns {status: 400} for a path
 * that is not valid percent-encoding or holds a NUL, {status: 404} for one that leads outside
 * the folder it names, else {file, base}.
 */
function fileFor(root, pathname) {
  const [base, rest] = pathname.startsWith('/pkg/')
    ? [join(root, 'pkg'), pathname.slice('/pkg/'.length)]
    : [join(root, 'www'), pathname.slice(1) || 'index.html'];
  let decoded;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return { status: 400 };
  }
  if (decoded.includes('\0')) return { status: 400 };
  const file = join(base, decoded);
  return inside(base, file) ? { file, base } : { status: 404 };
}

/** Resolves symlinks: the file must still be inside its folder once they are followed. */
async function realFile(file, base) {
  const [real, realBase] = await Promise.all([realpath(file), realpath(base)]);
  return inside(realBase, real) ? real : null;
}

function plain(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/**
 * Starts the static server and the mock LLM on 127.0.0.1.
 * @param {{port?: number, mockPort?: number, root?: string}} options `root` holds www/ and pkg/
 *   (the repository by default).
 * @returns {Promise<{url: string, mockUrl: string, close: () => Promise<void>}>}
 */
export async function startDemo({ port = 0, mockPort = 0, root = repoRoot } = {}) {
  const mock = await startMockLlm({ port: mockPort });
  const serve = async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed');
    let pathname;
    try {
      ({ pathname } = new URL(req.url, 'http://localhost'));
    } catch {
      return plain(res, 400, 'bad request');
    }
    if (pathname === '/demo-config.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ mockBaseUrl: mock.url }));
      return;
    }
    const target = fileFor(root, pathname);
    if (target.status === 400) return plain(res, 400, 'bad request');
    let body;
    let file;
    try {
      file = target.file && (await realFile(target.file, target.base));
      if (file && (await stat(file)).isDirectory()) file = await realFile(join(file, 'index.html'), target.base);
      body = file && (await readFile(file));
    } catch {
      body = null;
    }
    if (!body) return plain(res, 404, 'not found');
    res.writeHead(200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const server = createServer((req, res) => {
    // Whatever a request does, it gets an answer and the server keeps running.
    serve(req, res).catch(() => {
      if (!res.headersSent) plain(res, 500, 'internal error');
      else res.destroy();
    });
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
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const demo = await startDemo({
    port: Number(arg('--port', 8080)),
    mockPort: Number(arg('--mock-port', 0)),
    root: resolve(arg('--root', repoRoot)),
  });
  console.log(`agent-world-wasm demo: open ${demo.url}`);
  console.log(`(mock LLM at ${demo.mockUrl}; press Ctrl+C to stop)`);
  const stop = async () => { await demo.close(); process.exit(0); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
