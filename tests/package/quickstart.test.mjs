// "A new user following only the README": the README's snippets pasted into a fresh project
// that installed the packed tarball: (1) its page snippet in a Vite project built with
// `vite build`, served, and loaded in headless Chromium, (2) the same under `vite` (the dev
// server), (3) its quick start in a Node script. Only the provider's baseUrl is added (the
// local mock LLM); nothing is shimmed. Each must show the streamed two-agent conversation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertQuickStartOutput } from '../support/quickstart.mjs';
import { freshProject, pack, root, run } from './tarball.mjs';
import { launchChromium, loadAndWait, serveDir } from './browser.mjs';

let mock, tarball;
before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  tarball = (await pack()).tarball;
});
after(async () => { await mock?.close(); });

/** The README's first ```js block after `marker`, with the mock's baseUrl added (and nothing
 * else changed). */
async function readmeSnippet(marker) {
  const readme = await readFile(new URL('README.md', root), 'utf8');
  assert.ok(readme.includes(marker), `README.md has no ${JSON.stringify(marker)}: update this test`);
  const snippet = readme.slice(readme.indexOf(marker)).match(/```js\n([\s\S]*?)```/)[1];
  const code = snippet.replace('{ apiKey: "sk-..." }',
    `{ apiKey: "sk-...", baseUrl: ${JSON.stringify(`${mock.url}/v1`)} }`);
  assert.notEqual(code, snippet, 'the snippet changed shape: update this test');
  assert.match(code, /from "agent-world-wasm"/, 'the snippet imports the package by name');
  return code;
}
const quickStart = () => readmeSnippet('## Quick start');
const pageSnippet = () => readmeSnippet('In a page (Vite');

/** The page snippet's output: both agents answer the public question, their replies stream
 * into the page before each is published. */
function assertPageOutput(text) {
  const question = 'Should we rewrite our backend in Rust?';
  const lines = text.split('\n').filter((l) => l.startsWith('['));
  const about = (l) => l.includes(`About "${question}"`);
  assert.equal(lines[0], `[HUMAN] ${question}`, text);
  assert.equal(lines.filter((l) => l.startsWith('[alice]') && about(l)).length, 1, text);
  assert.equal(lines.filter((l) => l.startsWith('[bob]') && about(l)).length, 1, text);
  assert.equal(lines.length, 3, text);
  assert.ok(text.split('\n').some((l) => l.includes('here. About') && !l.startsWith('[')), text);
}

/** A fresh Vite project (index.html + main.js) whose main.js is the pasted page snippet. */
async function viteProject(name) {
  const dir = await freshProject(tarball, name, { scripts: { dev: 'vite', build: 'vite build' } });
  await writeFile(join(dir, 'index.html'), `<!doctype html>
<html><head><meta charset="utf-8"><title>quick start</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`);
  await writeFile(join(dir, 'main.js'), `${await pageSnippet()}
document.title = "done";
`);
  return dir;
}

// The repository's pinned Vite (package.json devDependencies), run as the project's own.
const vite = new URL('node_modules/vite/bin/vite.js', root).pathname;

async function assertPageShowsConversation(url) {
  const browser = await launchChromium();
  try {
    const { value: text, errors } = await loadAndWait(browser, url,
      () => document.title === 'done' && document.querySelector('pre').textContent);
    assert.deepEqual(errors, [], 'no uncaught page errors');
    assertPageOutput(text);
  } finally {
    await browser.close();
  }
}

test('a fresh Vite project: the README page snippet, vite build, in Chromium', { timeout: 150_000 }, async () => {
  const dir = await viteProject('vite');
  await run(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: dir, timeout: 120_000 });
  const assets = await readdir(join(dir, 'dist/assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `vite emitted the .wasm: ${assets}`);
  const server = await serveDir(join(dir, 'dist'));
  try {
    await assertPageShowsConversation(`${server.url}/`);
  } finally {
    await server.close();
  }
});

test('the same project under the Vite dev server (dependency pre-bundling on)', { timeout: 120_000 }, async () => {
  const dir = await viteProject('vite-dev');
  const dev = spawn(process.execPath, [vite, '--host', '127.0.0.1', '--port', '0'], { cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let log = '';
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`vite dev did not start: ${log}`)), 60_000);
      const read = (d) => {
        log += d;
        const m = log.match(/Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      };
      dev.stdout.on('data', read);
      dev.stderr.on('data', read);
      dev.on('exit', (code) => reject(new Error(`vite dev exited with ${code}: ${log}`)));
    });
    await assertPageShowsConversation(url);
  } finally {
    dev.kill();
  }
});

test('a fresh Node project: the README quick start, run with node', async () => {
  const dir = await freshProject(tarball, 'node-readme');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src/quickstart.js'), await quickStart());
  const { stdout } = await run(process.execPath, ['src/quickstart.js'], { cwd: dir, timeout: 30_000 });
  assertQuickStartOutput(stdout);
});
