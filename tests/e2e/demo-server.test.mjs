// The demo's static server (scripts/demo-server.mjs) under hostile requests, as any web page the
// user opens could send them to 127.0.0.1: bad percent-encoding, encoded `..`, sibling folders
// whose names start like the served ones, symlinks that lead out. Run as the real command (a
// child process), so a crash shows up as a dead server, with raw sockets so that no client
// normalises the paths first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../../scripts/demo-server.mjs', import.meta.url));
let root, child, port, exited;

/** One raw HTTP/1.0 request (no chunked answer) with `target` sent byte for byte; resolves
 * {status, body}. */
function raw(target, method = 'GET') {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)));
    socket.on('connect', () => socket.write(`${method} ${target} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`));
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const m = data.match(/^HTTP\/1\.[01] (\d{3})/);
      if (!m) return reject(new Error(`no HTTP answer to ${method} ${target}: ${JSON.stringify(data.slice(0, 200))}`));
      resolve({ status: Number(m[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

before(async () => {
  // A served root of its own: www/ and pkg/, next to folders and files that must stay private.
  root = mkdtempSync(join(tmpdir(), 'aww-demo-server-'));
  for (const dir of ['www', 'pkg/web', 'www-private', 'pkg-private', 'outside']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'www/index.html'), '<!doctype html><title>public index</title>');
  writeFileSync(join(root, 'www/app.js'), 'export const PUBLIC = 1;');
  writeFileSync(join(root, 'pkg/web/agent_world_wasm.js'), 'export default 1;');
  writeFileSync(join(root, 'www-private/secret.txt'), 'WWW-PRIVATE-SECRET');
  writeFileSync(join(root, 'pkg-private/secret.txt'), 'PKG-PRIVATE-SECRET');
  writeFileSync(join(root, 'outside/secret.txt'), 'SYMLINKED-SECRET');
  writeFileSync(join(root, 'root-secret.txt'), 'ROOT-SECRET');
  symlinkSync(join(root, 'outside/secret.txt'), join(root, 'www/linked.txt'));
  symlinkSync(join(root, 'outside'), join(root, 'www/linked-dir'));

  child = spawn(process.execPath, [SERVER, '--port', '0', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, err })));
  const deadline = Date.now() + 10_000;
  while (!/open http:\/\/127\.0\.0\.1:(\d+)\//.test(out) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  port = Number(out.match(/open http:\/\/127\.0\.0\.1:(\d+)\//)?.[1]);
  assert.ok(port, `the demo server did not start: ${out}${err}`);
});

after(async () => {
  child?.kill('SIGTERM');
  await exited;
  rmSync(root, { recursive: true, force: true });
});

/** The server still answers a normal request with the real file. */
async function stillServes(after) {
  const res = await raw('/app.js');
  assert.equal(res.status, 200, `the server stopped serving after ${after}`);
  assert.equal(res.body, 'export const PUBLIC = 1;');
}

test('the served files are there', async () => {
  assert.equal((await raw('/')).status, 200);
  assert.match((await raw('/')).body, /public index/);
  assert.equal((await raw('/pkg/web/agent_world_wasm.js')).body, 'export default 1;');
  assert.equal((await raw('/nope.js')).status, 404);
});

test('bad percent-encoding answers 400 and the server keeps serving', async () => {
  for (const target of ['/%c0%ae', '/%', '/%zz', '/pkg/%c0%ae%c0%ae/x', '/a%00b', '/%ed%a0%80']) {
    const res = await raw(target);
    assert.equal(res.status, 400, `${target}: ${res.status} ${res.body}`);
    await stillServes(target);
  }
});

test('nothing outside www/ and pkg/ is served: sibling folders, encoded `..`, symlinks', async () => {
  const hostile = [
    '/..%2fwww-private/secret.txt',
    '/..%2Fwww-private%2Fsecret.txt',
    '/%2e%2e%2fwww-private/secret.txt',
    '/pkg/..%2fpkg-private/secret.txt',
    '/pkg/..%2f..%2fpkg-private/secret.txt',
    '/..%2froot-secret.txt',
    '/..%5croot-secret.txt',
    '/%2e%2e/root-secret.txt',
    '/linked.txt',
    '/linked-dir/secret.txt',
    `/${encodeURIComponent(join(root, 'root-secret.txt'))}`,
    '//etc/passwd',
  ];
  for (const target of hostile) {
    const res = await raw(target);
    assert.ok([400, 404].includes(res.status), `${target} answered ${res.status}`);
    assert.doesNotMatch(res.body, /SECRET|root:/, `${target} leaked a file`);
  }
  await stillServes('the path-escape attempts');
});

test('the server survives other odd requests', async () => {
  for (const [method, target] of [['POST', '/app.js'], ['GET', 'http://[/'], ['DELETE', '/'], ['GET', '/www-private']]) {
    const res = await raw(target, method);
    assert.ok(res.status >= 400 && res.status < 500, `${method} ${target} answered ${res.status}`);
  }
  await stillServes('odd methods and targets');
  assert.equal(child.exitCode, null, 'the server is still running');
});
