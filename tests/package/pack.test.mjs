// `npm pack` of the generated package (pkg/npm, scripts/package.sh): the tarball holds exactly
// the shipped files, every file the exports map points to is in it, the manifest is right, and
// each runtime's conditions resolve to the entry the README names. Sizes are printed, not
// asserted (budgets belong to the benchmark).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { crateVersion, exportTargets, pack, resolveExport, root } from './tarball.mjs';

let packed, manifest;
before(async () => {
  packed = await pack();
  manifest = JSON.parse(await readFile(new URL('pkg/npm/package.json', root), 'utf8'));
});

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

test('the tarball holds exactly the shipped files, and its sizes are printed', () => {
  const files = packed.files.map((f) => f.path).sort();
  for (const f of packed.files) console.log(`  ${f.path.padEnd(32)} ${kib(f.size)}`);
  console.log(`  ${packed.filename}: packed ${kib(packed.size)}, unpacked ${kib(packed.unpackedSize)}, ${files.length} files`);
  assert.deepEqual(files, [
    'LICENSE', 'README.md', 'deno.d.ts', 'deno.js',
    'node/agent_world_wasm.cjs', 'node/index.cjs',
    'node/index.d.cts', 'node/index.d.mts', 'node/index.mjs', 'package.json',
    'web/agent_world_wasm.d.ts', 'web/agent_world_wasm.js', 'web/agent_world_wasm_bg.wasm',
    'workerd.d.ts', 'workerd.js',
  ]);
  assert.ok(!files.some((f) => /(^|\/)\.|\.rs$|_bg\.wasm\.d\.ts$|^src\//.test(f)), 'no dotfile, source or raw ABI types');
});

test('every file the exports map, main, module and types point to is in the tarball', () => {
  const files = new Set(packed.files.map((f) => f.path));
  const targets = exportTargets(manifest);
  assert.ok(targets.length >= 10, targets.join());
  for (const t of targets) assert.ok(files.has(t), `${t} is exported but not packed`);
});

test('the manifest: name, version, license, type, engines, sideEffects, types first', () => {
  assert.equal(manifest.name, 'agent-world-wasm');
  assert.equal(manifest.version, crateVersion);
  assert.equal(manifest.license, 'MIT');
  assert.equal(manifest.type, 'module');
  assert.equal(manifest.engines.node, '>=20');
  assert.deepEqual(manifest.sideEffects, ['./node/*', './deno.js', './workerd.js']);
  assert.equal(packed.name, 'agent-world-wasm');
  assert.equal(packed.version, crateVersion);
  // TypeScript takes the first matching key too: `types` must lead every conditional object.
  const walk = (v, path) => {
    if (typeof v === 'string') return;
    const keys = Object.keys(v);
    if (keys.includes('types')) assert.equal(keys[0], 'types', `${path}: "types" must come first`);
    if (keys.includes('default')) assert.equal(keys.at(-1), 'default', `${path}: "default" must come last`);
    for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
  };
  walk(manifest.exports['.'], 'exports["."]');
});

// The conditions each runtime or bundler resolves with (their documented sets).
const RUNTIMES = [
  ['Node 20+ import', ['node', 'import'], 'node/index.mjs'],
  ['Node 20+ require', ['node', 'require'], 'node/index.cjs'],
  ['Deno', ['deno', 'node', 'import'], 'deno.js'],
  ['wrangler (workerd)', ['workerd', 'worker', 'browser', 'import'], 'workerd.js'],
  ['Vite (browser)', ['browser', 'module', 'import', 'production'], 'web/agent_world_wasm.js'],
  ['webpack (web)', ['webpack', 'browser', 'module', 'import'], 'web/agent_world_wasm.js'],
  ['webpack (webworker)', ['webpack', 'worker', 'browser', 'import'], 'web/agent_world_wasm.js'],
  ['an unknown ESM runtime', ['import'], 'web/agent_world_wasm.js'],
  ['an unknown CommonJS runtime', ['require'], 'node/index.cjs'],
  ['a Node-targeted resolver without import/require', ['node'], 'node/index.cjs'],
];

test('each runtime resolves the entry the README names', () => {
  for (const [who, conditions, entry] of RUNTIMES) {
    assert.equal(resolveExport(manifest, conditions), `./${entry}`, who);
    const types = resolveExport(manifest, ['types', ...conditions]);
    assert.match(types, /\.d\.[cm]?ts$/, `${who}: types`);
  }
});
