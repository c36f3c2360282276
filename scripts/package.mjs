// Assembles the publishable npm package in pkg/npm/ from the wasm-pack outputs pkg/web/ and
// pkg/nodejs/ (scripts/package.sh builds them first when missing). Run: node scripts/package.mjs
//
// What `import { AgentWorld } from "agent-world-wasm"` resolves to (the exports map below):
//   deno             deno.js     the web build, initialised at import from the .wasm imported
//                                as a module (source-phase import)
//   workerd          workerd.js  the web build, initialised synchronously at import from the
//                                .wasm imported as a module (wrangler bundles it as CompiledWasm)
//   worker, browser  web/        the web build: call `await init()` once before use (it fetches
//                                web/agent_world_wasm_bg.wasm next to the glue; bundlers emit it
//                                as an asset through `new URL(..., import.meta.url)`)
//   node             node/       the nodejs build (CommonJS), instantiated at import; the ESM
//                                entry wraps the same CommonJS module (one instance)
//   import, default  web/        as browser;  require: node/index.cjs
// Every entry has a default export `init()`: it does the work in the web build and resolves at
// once where the module initialised itself, so `await init()` is portable code everywhere.
// Pages do not get a self-initialising entry: top-level await in a dependency breaks bundlers
// whose target predates it, and an explicit init() lets a page pass its own URL or Module.
import { readFileSync, writeFileSync, mkdirSync, rmSync, copyFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { minifyJs } from './minify-js.mjs';

const root = new URL('../', import.meta.url);
const at = (p) => new URL(p, root);
const out = (p) => new URL(`pkg/npm/${p}`, root);
const NAME = 'agent_world_wasm';

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

// The glue as the glue step left it, before build_pkg minified it (scripts/minify.mjs keeps
// it there): the code below finds the exports, snippet imports and the instance assignment by
// their shape in it, then the entries it writes are minified like the build's.
const GLUE = { web: `target/glue/web/${NAME}.js`, nodejs: `target/glue/nodejs/${NAME}.js` };
for (const f of [GLUE.web, `pkg/web/${NAME}_bg.wasm`, `pkg/web/${NAME}.d.ts`,
  GLUE.nodejs, `pkg/nodejs/${NAME}_bg.wasm`, `pkg/nodejs/${NAME}.d.ts`]) {
  if (!existsSync(at(f))) fail(`${f} is missing: build it first (source scripts/env.sh; build_pkg web nodejs)`);
}

const cargo = readFileSync(at('Cargo.toml'), 'utf8');
const field = (name) => cargo.match(new RegExp(`^${name} = "([^"]+)"`, 'm'))?.[1]
  ?? fail(`Cargo.toml has no ${name}`);

/** Replaces `from` (a string or RegExp) in `text`, failing loudly when it is not there: the
 * glue's shape is wasm-bindgen's, and a silent no-op would ship a broken package. */
function replaceOnce(text, from, to, what) {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) fail(`${what}: the wasm-bindgen output changed shape (${from} not found)`);
  return text.replace(from, to);
}

/** wasm-bindgen's `InitOutput` lists the raw ABI (pointers, `any`): not this package's API.
 * It becomes the instance's exports, typed as WebAssembly exports with the memory. */
function typedInitOutput(dts) {
  return replaceOnce(dts, /export interface InitOutput \{[\s\S]*?\n\}\n/,
    '/** The WebAssembly instance\'s exports (the raw ABI; not part of the API). */\n' +
    'export interface InitOutput {\n  readonly memory: WebAssembly.Memory;\n' +
    '  readonly [name: string]: WebAssembly.ExportValue;\n}\n', 'web .d.ts InitOutput');
}

// The classes declare `[Symbol.dispose]()` (wasm-bindgen): the declarations name the lib that
// types it, so projects compiling them (no skipLibCheck) need neither lib "esnext" nor
// @types/node for that (TypeScript 5.2+).
const DISPOSABLE = '/// <reference lib="esnext.disposable" />\n';
const withDisposable = (dts) => (dts.includes('[Symbol.dispose]') ? DISPOSABLE + dts : dts);

// The guard around the glue (src/bindings/guard.js says why): it wraps the instance's exports
// where the glue takes them, and the AgentWorld class once it is defined. It needs to know
// which calls are async (they reject instead of throwing); the declarations say.
const GUARD = readFileSync(at('src/bindings/guard.js'), 'utf8');
const declaredDts = readFileSync(at(`pkg/nodejs/${NAME}.d.ts`), 'utf8');
const classDts = declaredDts.match(/^export class AgentWorld \{\n([\s\S]*?)\n\}/m)?.[1] ?? fail('the .d.ts has no class AgentWorld');
// The async methods the glue step defines on the class, each calling the one `__call` export
// (the `TS_CALL` blocks of src/bindings, scripts/glue-step.mjs).
const calledDts = [...declaredDts.matchAll(/^export interface AgentWorld \{\n\s+\/\/ Defined by the glue step[^\n]*: each calls __call\.\n([\s\S]*?)\n\}/gm)]
  .map((m) => m[1]).join('\n');
const called = [...calledDts.matchAll(/^\s+(\w+)\(.*\): Promise</gm)].map((m) => m[1]);
if (called.length < 10) fail(`the .d.ts declares ${called.length} methods behind __call`);
const asyncMembers = [...`${classDts}\n${calledDts}`.matchAll(/^\s+(static )?(\w+)\(.*\): Promise</gm)];
const asyncMethods = asyncMembers.filter((m) => !m[1]).map((m) => m[2]);
const asyncFunctions = [...readFileSync(at(`pkg/nodejs/${NAME}.d.ts`), 'utf8')
  .matchAll(/^export function (\w+)\(.*\): Promise</gm)].map((m) => m[1]);
for (const must of ['send', 'addAgent', 'idle']) {
  if (!asyncMethods.includes(must)) fail(`the .d.ts does not declare AgentWorld.${must}() async`);
}
if (!asyncMembers.some((m) => m[1] && m[2] === 'create') || !asyncFunctions.includes('storageEstimate')) {
  fail('the .d.ts does not declare AgentWorld.create() or storageEstimate() async');
}

/** The instance exports behind the async methods and functions: build_pkg numbers the
 * exports (scripts/glue-step.mjs), so each is read from the glue, where the method or
 * function's body (no indentation: the glue step drops it) calls it as `const ret = wasm.<name>(`. */
function asyncExportsOf(glue, what) {
  const cls = glue.indexOf('class AgentWorld {\n');
  if (cls < 0) fail(`${what}: no class AgentWorld`);
  const heads = [
    ...asyncMembers.map((m) => [cls, `\n${m[1] ?? ''}${called.includes(m[2]) ? '__call' : m[2]}(`]),
    ...asyncFunctions.map((f) => [0, `function ${f}(`]),
  ];
  return [...new Set(heads.map(([from, head]) => {
    let at = glue.indexOf(head, from);
    // A function is `export function f(` (web) or `function f(` (nodejs), at a line's start.
    while (at > 0 && head.startsWith('function') && !/(?:^|\n)(?:export )?$/.test(glue.slice(Math.max(0, at - 8), at))) {
      at = glue.indexOf(head, at + 1);
    }
    const body = at < 0 ? '' : glue.slice(at, glue.indexOf('\n}\n', at));
    return body.match(/\nconst ret = wasm\.(\w+)\(/)?.[1]
      ?? fail(`${what}: the wasm-bindgen output changed shape (no \`const ret = wasm.<export>(\` in ${head.trim()}…)`);
  }))];
}

/** `glue` with its JS snippets (the `inline_js` blocks of src/bindings and src/web) written into it in
 * place of their import (web) or require (nodejs), each in its own function scope, so each
 * entry stays one self-contained file (and the CommonJS build never requires an ES module,
 * which Node 20 before 20.19 refuses). A snippet's exports must be `export function`s (or
 * `export async function`s). */
function withSnippets(glue, dir, what) {
  const line = /^(?:import \{ ([\w, ]+) \} from '(\.\/snippets\/[^']+)';|const \{ ([\w, ]+) \} = require\(String\.raw`(\.\/snippets\/[^`]+)`\);)$/gm;
  const out = glue.replace(line, (_, importNames, importPath, requireNames, requirePath) => {
    const names = (importNames ?? requireNames).split(', ');
    const source = readFileSync(at(`${dir}/${(importPath ?? requirePath).slice(2)}`), 'utf8');
    const declared = [...source.matchAll(/^export (?:async )?function (\w+)\(/gm)].map((m) => m[1]);
    if (/^export (?!(?:async )?function )/m.test(source) || !names.every((n) => declared.includes(n))) {
      fail(`${what}: a snippet exports something other than functions (${importPath ?? requirePath})`);
    }
    const body = source.replace(/^export (async )?function /gm, '$1function ').trim();
    return `const { ${names.join(', ')} } = (() => {\n${body}\nreturn { ${names.join(', ')} };\n})();`;
  });
  if (out.includes('./snippets/')) fail(`${what}: the wasm-bindgen output changed shape (a snippet import was left)`);
  return out;
}

/** `glue` with the guard: its code after the first line (the glue's `@ts-self-types`
 * directive stays first), the exports wrapped where the glue assigns them, the class after. */
function guarded(glue, assignment, what) {
  const asyncExports = asyncExportsOf(glue, what);
  const [first, ...rest] = glue.split('\n');
  const body = replaceOnce(rest.join('\n'), assignment,
    assignment.replace(/= (\w+)\.exports;$/, `= __aww.guardExports($1.exports, ${JSON.stringify(asyncExports)});`),
    `${what}: the instance exports assignment`);
  return `${first}\n${GUARD}${body}\n__aww.guardClass(AgentWorld, ${JSON.stringify(asyncMethods)});\n`;
}

rmSync(out(''), { recursive: true, force: true });
for (const d of ['web', 'node']) mkdirSync(out(d), { recursive: true });

// --- web build (pages, workers, bundlers, Deno, workerd) -------------------------------------
writeFileSync(out(`web/${NAME}.js`), minifyJs(`web/${NAME}.js`,
  guarded(withSnippets(readFileSync(at(GLUE.web), 'utf8'), 'pkg/web', 'web glue'),
    'wasm = instance.exports;', 'web glue'), { module: true }));
copyFileSync(at(`pkg/web/${NAME}_bg.wasm`), out(`web/${NAME}_bg.wasm`));
// The init function's parameter gets a camelCase name (the option key stays `module_or_path`:
// that is the glue's API).
const webDts = replaceOnce(typedInitOutput(readFileSync(at(`pkg/web/${NAME}.d.ts`), 'utf8')),
  'export default function __wbg_init (module_or_path?:', 'export default function init(options?:',
  'web .d.ts init()');
writeFileSync(out(`web/${NAME}.d.ts`), withDisposable(webDts));

const webGlue = readFileSync(at(GLUE.web), 'utf8');
// init() must be a no-op once the module is initialised (deno.js and workerd.js rely on it):
// a check only, the result is not used.
replaceOnce(webGlue, 'if (wasm !== undefined) return wasm;', '', 'web glue init() idempotence');

writeFileSync(out('deno.js'), `// Deno: the web build, initialised synchronously here from the .wasm imported as a
// WebAssembly.Module (a source-phase import: part of the module graph, so no --allow-read, and
// no top-level await). init() stays exported and resolves at once.
import source wasmModule from "./web/${NAME}_bg.wasm";
import { initSync } from "./web/${NAME}.js";
export * from "./web/${NAME}.js";
export { default } from "./web/${NAME}.js";
initSync({ module: wasmModule });
`);
writeFileSync(out('workerd.js'), `// Cloudflare workerd (wrangler resolves the "workerd" condition and bundles the .wasm import as
// a CompiledWasm module): the web build, initialised synchronously here. workerd has no
// fetch(file:), so the glue's default init() could not find the .wasm by URL.
import wasmModule from "./web/${NAME}_bg.wasm";
import { initSync } from "./web/${NAME}.js";
export * from "./web/${NAME}.js";
export { default } from "./web/${NAME}.js";
initSync({ module: wasmModule });
`);
const reexportDts = `export * from "./web/${NAME}.js";\nexport { default } from "./web/${NAME}.js";\n`;
writeFileSync(out('deno.d.ts'), reexportDts);
writeFileSync(out('workerd.d.ts'), reexportDts);

// --- nodejs build (Node 20+, CommonJS and ESM) ------------------------------------------------
// The package is "type": "module", so the CommonJS glue is renamed .cjs. wasm-bindgen emits the
// same .wasm for both targets (only the glue differs), so the package ships it once and the
// nodejs glue reads the web build's copy.
if (!readFileSync(at(`pkg/nodejs/${NAME}_bg.wasm`)).equals(readFileSync(at(`pkg/web/${NAME}_bg.wasm`)))) {
  fail('the web and nodejs builds\' .wasm differ: ship node/agent_world_wasm_bg.wasm too');
}
const nodeGlue = replaceOnce(guarded(withSnippets(readFileSync(at(GLUE.nodejs), 'utf8'),
  'pkg/nodejs', 'nodejs glue'), 'let wasm = wasmInstance.exports;', 'nodejs glue'),
  `const wasmPath = \`\${__dirname}/${NAME}_bg.wasm\`;`,
  `const wasmPath = \`\${__dirname}/../web/${NAME}_bg.wasm\`;`, 'the nodejs glue\'s .wasm path');
writeFileSync(out(`node/${NAME}.cjs`), minifyJs(`node/${NAME}.cjs`, nodeGlue, { module: false }));
writeFileSync(out('node/index.cjs'), `'use strict';
// Node (require): the nodejs build instantiates its WebAssembly synchronously when first
// required, so nothing needs init(); it is exported (also as \`default\`) for portable code.
const glue = require('./${NAME}.cjs');
async function init() {}
module.exports = Object.assign(Object.create(null), glue, { init, default: init });
`);
const require = createRequire(import.meta.url);
const names = Object.keys(require(out(`node/${NAME}.cjs`).pathname))
  .filter((n) => /^[A-Za-z]\w*$/.test(n) && !n.startsWith('__'));
if (!names.includes('AgentWorld')) fail(`the nodejs glue exports no AgentWorld (exports: ${names})`);
writeFileSync(out('node/index.mjs'), `// Node (import): the same CommonJS module as require() gets, so ESM and CommonJS code in one
// process share one engine instance (one memory store). Instantiated at import: no init() needed.
import node from "./index.cjs";
export const { ${names.join(', ')} } = node;
export default node.default;
`);
const nodeDts = withDisposable(readFileSync(at(`pkg/nodejs/${NAME}.d.ts`), 'utf8')) +
  '\n/** Resolves at once: in Node the module is ready when imported (kept for portable code). */\n' +
  'export default function init(): Promise<void>;\n';
writeFileSync(out('node/index.d.mts'), nodeDts);
writeFileSync(out('node/index.d.cts'), nodeDts);

// --- package.json, README, LICENSE -------------------------------------------------------------
const web = { types: `./web/${NAME}.d.ts`, default: `./web/${NAME}.js` };
const nodeImport = { types: './node/index.d.mts', default: './node/index.mjs' };
const nodeRequire = { types: './node/index.d.cts', default: './node/index.cjs' };
const manifest = {
  name: 'agent-world-wasm',
  version: field('version'),
  description: field('description'),
  license: field('license'),
  keywords: ['agents', 'llm', 'multi-agent', 'wasm', 'webassembly', 'indexeddb', 'streaming'],
  type: 'module',
  // Condition order matters: the first key a runtime or bundler knows wins.
  exports: {
    '.': {
      deno: { types: './deno.d.ts', default: './deno.js' },
      workerd: { types: './workerd.d.ts', default: './workerd.js' },
      worker: web,
      browser: web,
      node: { import: nodeImport, require: nodeRequire, default: nodeRequire },
      import: web,
      require: nodeRequire,
      default: web,
    },
    // The web build by path, for runtimes without a matching condition; and the .wasm, for
    // init({ module_or_path }) or a bundler's URL import.
    './web': web,
    './agent_world_wasm_bg.wasm': `./web/${NAME}_bg.wasm`,
    './package.json': './package.json',
  },
  // For resolvers that predate "exports" (TypeScript's node10 resolution, old bundlers).
  main: './node/index.cjs',
  module: `./web/${NAME}.js`,
  types: `./web/${NAME}.d.ts`,
  files: ['web/', 'node/', 'deno.js', 'deno.d.ts', 'workerd.js', 'workerd.d.ts'],
  // The web glue has no top-level effect (init() does the work); the nodejs glue instantiates
  // the module when imported, and the deno/workerd entries initialise it.
  sideEffects: ['./node/*', './deno.js', './workerd.js'],
  engines: { node: '>=20' },
};
writeFileSync(out('package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(at('LICENSE'), out('LICENSE'));

// The repository's README without the sections about developing this repository.
const DEV_ONLY = ['The two commands', 'The demo', 'Development'];
const readme = readFileSync(at('README.md'), 'utf8');
const kept = readme.split(/^(?=## )/m)
  .filter((s) => !DEV_ONLY.some((h) => s.startsWith(`## ${h}\n`)))
  .join('');
if (!kept.includes('## Install')) fail('README.md has no "## Install" section');
writeFileSync(out('README.md'), kept);
console.error(`package: pkg/npm/ agent-world-wasm@${manifest.version}`);
