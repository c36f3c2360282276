// The application-supplied stores of examples/ in the runtimes they are written for, over the
// built `web` package: Deno KV under Deno, a Durable Object under workerd (miniflare). In each,
// a world is created and converses with a custom JS provider, then a NEW AgentWorld.open (a
// new Deno process; a restarted workerd) on the same storage finds the conversation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';

const root = new URL('../../', import.meta.url);
const path = (p) => new URL(p, root).pathname;

test('Deno KV: a world and its conversation survive into a new process', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'aww-deno-kv-'));
  const kvPath = join(dir, 'worlds.kv');
  const run = async (text) => {
    const { stdout } = await promisify(execFile)(path('.tools/deno/node_modules/.bin/deno'), [
      'run', '--quiet', '--no-prompt', '--unstable-kv',
      `--allow-read=${path('pkg/')},${dir}`, `--allow-write=${dir}`,
      path('examples/deno-kv/main.js'), kvPath, text,
    ], { timeout: 60_000 });
    return JSON.parse(stdout.trim().split('\n').pop());
  };
  try {
    const first = await run('hello from run one');
    assert.equal(first.world, 'deno-kv-demo');
    assert.deepEqual(first.messages, [
      ['HUMAN', 'hello from run one'],
      ['echo', 'echo: hello from run one'],
    ]);
    const second = await run('and from run two');
    assert.equal(second.chat, first.chat, 'the reopened world continues the same chat');
    assert.deepEqual(second.messages, [
      ...first.messages,
      ['HUMAN', 'and from run two'],
      ['echo', 'echo: and from run two'],
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('Durable Object: a world and its conversation survive a workerd restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'aww-do-'));
  // What a worker deploys: the npm package's web entry, whose glue has wasm-bindgen's JS
  // snippets written in (workerd takes an explicit module list; pkg/web imports snippets/).
  const pkg = new URL('pkg/npm/web/', root);
  const example = new URL('examples/durable-object/', root);
  const options = {
    compatibilityDate: '2025-01-01',
    durableObjects: { WORLDS: 'WorldObject' },
    durableObjectsPersist: dir,
    modules: [
      { type: 'ESModule', path: 'worker.js',
        contents: await readFile(new URL('worker.js', example), 'utf8') },
      { type: 'ESModule', path: 'storage_adapter.js',
        contents: await readFile(new URL('storage_adapter.js', example), 'utf8') },
      { type: 'ESModule', path: 'agent_world_wasm.js',
        contents: await readFile(new URL('agent_world_wasm.js', pkg), 'utf8') },
      { type: 'CompiledWasm', path: 'agent_world_wasm_bg.wasm',
        contents: await readFile(new URL('agent_world_wasm_bg.wasm', pkg)) },
    ],
  };
  const request = async (text) => {
    const mf = new Miniflare(options);
    try {
      const res = await mf.dispatchFetch(
        `http://localhost/?world=Team&text=${encodeURIComponent(text)}`);
      const body = await res.text();
      assert.equal(res.status, 200, body);
      return JSON.parse(body);
    } finally {
      await mf.dispose();
    }
  };
  try {
    const first = await request('hello from request one');
    assert.equal(first.world, 'team');
    assert.deepEqual(first.messages, [
      ['HUMAN', 'hello from request one'],
      ['echo', 'echo: hello from request one'],
    ]);
    const second = await request('and from request two');
    assert.equal(second.chat, first.chat);
    assert.deepEqual(second.messages, [
      ...first.messages,
      ['HUMAN', 'and from request two'],
      ['echo', 'echo: and from request two'],
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
