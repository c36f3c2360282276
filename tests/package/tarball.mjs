// Helpers of the packed-package tests: `npm pack` of pkg/npm (scripts/package.sh made it), the
// tarball installed into a fresh directory as npm would (extracted into
// node_modules/agent-world-wasm: no registry, no network), and the exports map resolved the
// way a runtime or bundler does (first matching condition wins, in the map's key order).
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp as makeTemp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const root = new URL('../../', import.meta.url);
export const run = promisify(execFile);
export const crateVersion = (await readFile(new URL('Cargo.toml', root), 'utf8'))
  .match(/^version = "([^"]+)"/m)[1];

// Every temporary directory of this process goes when it exits.
const temps = [];
process.on('exit', () => { for (const d of temps) rmSync(d, { recursive: true, force: true }); });
async function mkdtemp(prefix) {
  const dir = await makeTemp(prefix);
  temps.push(dir);
  return dir;
}

/** Packs pkg/npm into a new temporary directory: npm's JSON summary plus the tarball's path. */
export async function pack() {
  const dest = await mkdtemp(join(tmpdir(), 'aww-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dest,
    new URL('pkg/npm/', root).pathname], { timeout: 60_000 });
  const [summary] = JSON.parse(stdout);
  return { ...summary, tarball: join(dest, summary.filename) };
}

/** A fresh project directory with the tarball installed as node_modules/agent-world-wasm. */
export async function freshProject(tarball, prefix, packageJson = {}) {
  const dir = await mkdtemp(join(tmpdir(), `aww-${prefix}-`));
  const target = join(dir, 'node_modules', 'agent-world-wasm');
  await mkdir(target, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `aww-${prefix}-check`,
    private: true, type: 'module', dependencies: { 'agent-world-wasm': crateVersion }, ...packageJson }, null, 2));
  return dir;
}

/** Resolves `exports[subpath]` for a runtime that knows `conditions` (plus "default"). */
export function resolveExport(manifest, conditions, subpath = '.') {
  const pick = (target) => {
    if (typeof target === 'string') return target;
    for (const [key, value] of Object.entries(target)) {
      if (key === 'default' || conditions.includes(key)) {
        const found = pick(value);
        if (found) return found;
      }
    }
    return null;
  };
  return pick(manifest.exports[subpath]);
}

/** Every file path an exports map (and main/module/types) points to. */
export function exportTargets(manifest) {
  const out = new Set([manifest.main, manifest.module, manifest.types].filter(Boolean));
  const walk = (v) => (typeof v === 'string' ? out.add(v) : Object.values(v).forEach(walk));
  walk(manifest.exports);
  return [...out].map((p) => p.replace(/^\.\//, ''));
}
