// `make bench`, size part (run by scripts/bench.sh): the .wasm and the JS glue of each built
// target, raw / gzip -9 / brotli q11 (node's zlib), against the budget stated in README.md,
// plus twiggy's top items of a name-keeping build.
//   node bench/size.mjs --targets web,nodejs,bundler --twiggy-top F --twiggy-dom F --names-wasm F --out F
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
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
  for (const f of GLUE[t]) for (const [k, v] of Object.entries(sizes(new URL(f, dir)))) glue[k] += v;
  const total = { raw: wasm.raw + glue.raw, gzip: wasm.gzip + glue.gzip, brotli: wasm.brotli + glue.brotli };
  targets.push({ target: t, wasm, glue, total, gzip_vs_budget: total.gzip / budget, over_budget: total.gzip > budget });
}

/** twiggy's JSON (`-f json`) → the top 10 items with their share of the name-keeping build. */
function twiggyItems(file, pick) {
  if (!file || !existsSync(file)) return null;
  const data = JSON.parse(readFileSync(file, 'utf8'));
  const list = Array.isArray(data) ? data : data.items ?? [];
  return list.slice(0, 10).map(pick);
}
const top = twiggyItems(arg('--twiggy-top'), (x) => ({ name: x.name, bytes: x.shallow_size, percent: x.shallow_size_percent }));
const dominators = twiggyItems(arg('--twiggy-dom'), (x) => ({ name: x.name, retained_bytes: x.retained_size, percent: x.retained_size_percent }));
const namesWasm = arg('--names-wasm');
const result = {
  budget_gzip_bytes: budget,
  targets,
  over_budget: targets.some((t) => t.over_budget),
  twiggy: top && {
    build: 'release cargo build → wasm-bindgen (names kept) → wasm-opt with the release flags plus -g (names kept); not the shipped bytes',
    names_build_bytes: namesWasm && existsSync(namesWasm) ? readFileSync(namesWasm).length : null,
    top,
    dominators,
  },
};
writeFileSync(arg('--out', '/dev/stdout'), JSON.stringify(result, null, 1));
