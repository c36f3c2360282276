// `make bench`, size part (run by scripts/bench.sh): the .wasm and the JS glue of each built
// target, raw / gzip -9 / brotli q11 (node's zlib), against the budget stated in README.md,
// plus twiggy's top items of a name-keeping build.
//   node bench/size.mjs --targets web,nodejs,bundler --twiggy-top F --twiggy-dom F --names-wasm F --out F
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const root = new URL('../', import.meta.url);

/** The budget is written once, in README.md ("Size budget: … **250 KB** …"); KB = 1,000 bytes. */
export function readBudget() {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  const m = readme.match(/Size budget:[^\n]*?\*\*(\d+(?:\.\d+)?) KB\*\*/);
  if (!m) throw new Error('README.md states no "Size budget: … **N KB**" line');
  return Math.round(Number(m[1]) * 1000);
}

function sizes(path) {
  const buf = readFileSync(path);
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length } }).length,
  };
}

// What a consumer downloads per target: the module and the glue it imports.
const GLUE = {
  web: ['agent_world_wasm.js'],
  nodejs: ['agent_world_wasm.js'],
  bundler: ['agent_world_wasm.js', 'agent_world_wasm_bg.js'],
};

const budget = readBudget();
const targets = [];
for (const t of arg('--targets', 'web,nodejs').split(',')) {
  const dir = new URL(`pkg/${t}/`, root);
  if (!existsSync(new URL('agent_world_wasm_bg.wasm', dir))) continue;
  const wasm = sizes(new URL('agent_world_wasm_bg.wasm', dir));
  const glue = { raw: 0, gzip: 0, brotli: 0 };
  // wasm-bindgen's JS snippets (`#[wasm_bindgen(module = ...)]`) are imported by the glue too.
  const snippets = existsSync(new URL('snippets/', dir))
    ? readdirSync(new URL('snippets/', dir), { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => `snippets/${f}`)
    : [];
  for (const f of [...GLUE[t], ...snippets]) for (const [k, v] of Object.entries(sizes(new URL(f, dir)))) glue[k] += v;
  const total = { raw: wasm.raw + glue.raw, gzip: wasm.gzip + glue.gzip, brotli: wasm.brotli + glue.brotli };
  targets.push({ target: t, wasm, glue, total, gzip_vs_budget: total.gzip / budget, over_budget: total.gzip > budget });
}

// twiggy's JSON (`-f json`). The name subsections exist only in the name-keeping build (the
// shipped module has none), so they are left out of every list.
const readJson = (file) => (file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null);
const NAMES = /^"(function|data|local|global|type|module|table|memory|elem|label)? ?names" subsection$/;
const allItems = (readJson(arg('--twiggy-top')) ?? []).filter((x) => !NAMES.test(x.name));
const shipped = allItems.reduce((a, x) => a + x.shallow_size, 0);
const pct = (b) => (100 * b) / shipped;
const top = allItems.slice(0, 10).map((x) => ({ name: x.name, bytes: x.shallow_size, percent: pct(x.shallow_size) }));

// Dominators: the tree's first real items under the root and the indirect-call table (most code
// is reachable only through `table[0]`/`elem[0]`, which would otherwise retain everything).
const CONTAINER = /^(<meta root>|table\[\d+\]|elem\[\d+\])$/;
const dom = [];
const walk = (node, underContainer) => {
  const container = CONTAINER.test(node.name);
  if (!container && underContainer && !NAMES.test(node.name)) dom.push({ name: node.name, retained_bytes: node.retained_size, percent: pct(node.retained_size) });
  for (const c of node.children ?? []) walk(c, container);
};
for (const n of readJson(arg('--twiggy-dom'))?.items ?? []) walk(n, true);
const dominators = dom.sort((a, b) => b.retained_bytes - a.retained_bytes).slice(0, 10);

// Shallow bytes by crate (the first path segment of each item's name): where the size comes from.
const crates = {};
for (const x of allItems) {
  const name = x.name.replace(/^<+/, '');
  const key = name.startsWith('data segment') ? 'data segments (.rodata: strings, tables)'
    : /^(import|export) /.test(name) ? 'imports and exports'
      : (name.match(/^([A-Za-z_][A-Za-z0-9_]*)(\[[0-9a-f]+\])?(::|$)/) || [])[1] ?? 'other (wasm-bindgen shims, sections)';
  crates[key] = (crates[key] ?? 0) + x.shallow_size;
}
const byCrate = Object.entries(crates).sort((a, b) => b[1] - a[1]).slice(0, 10)
  .map(([crate, bytes]) => ({ crate, bytes, percent: pct(bytes) }));

const namesWasm = arg('--names-wasm');
const result = {
  budget_gzip_bytes: budget,
  targets,
  over_budget: targets.some((t) => t.over_budget),
  twiggy: allItems.length ? {
    build: 'release cargo build → wasm-bindgen (names kept) → wasm-opt with the release flags plus -g; percentages are of its bytes without the name subsections',
    names_build_bytes: namesWasm && existsSync(namesWasm) ? readFileSync(namesWasm).length : null,
    without_names_bytes: shipped,
    top,
    dominators,
    by_crate: byCrate,
  } : null,
};
writeFileSync(arg('--out', '/dev/stdout'), JSON.stringify(result, null, 1));
