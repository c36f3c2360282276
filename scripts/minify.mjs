// build_pkg's last step (scripts/env.sh): minifies the JS a page downloads beside the .wasm,
// the glue and the snippets wasm-bindgen copied into `<dir>/snippets/` (the `inline_js` of
// src/, which keeps its comments and names for readers), with oxc's minifier through the
// `rolldown` dev tool: the web build's 9.7 KB gzip of JS became 7.3.
// - The glue as the glue step left it is kept in target/glue/<target>/ first: that is what
//   scripts/package.mjs reads (it finds the exports, the snippet imports and the instance
//   assignment by their shape there) to write the npm entries, which it minifies in turn.
// - The glue's first line, the `@ts-self-types` directive Deno reads, stays first.
// - Each snippet `export function` stays at the start of a line of its own (the shape
//   package.mjs inlines), and the step fails if the exported functions are not exactly those
//   of the source.
// `--copy-only` keeps the copy and minifies nothing (AWW_WASM_OPT=off: the demo's local build,
// which installs no npm tools). Running the step twice is harmless.
//   node scripts/minify.mjs pkg/web [--copy-only]
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';

const NAME = 'agent_world_wasm';
const [dir, flag] = process.argv.slice(2);
const fail = (message) => {
  console.error(`minify: ${message}`);
  process.exit(1);
};
if (!dir) fail('usage: node scripts/minify.mjs <wasm-pack output directory> [--copy-only]');

const glueFile = join(dir, `${NAME}.js`);
const copy = join('target', 'glue', basename(dir));
mkdirSync(copy, { recursive: true });
const glue = readFileSync(glueFile, 'utf8');
// A second run finds the glue minified already: the copy from the first run is kept.
const minified = glue.split('\n').length < 4;
if (!minified) writeFileSync(join(copy, `${NAME}.js`), glue);
if (flag === '--copy-only') process.exit(0);

const { minifyJs } = await import('./minify-js.mjs');
// The nodejs target's glue is CommonJS (`require`, `exports.X =`), the others ES modules.
if (!minified) writeFileSync(glueFile, minifyJs(glueFile, glue, { module: /^(?:import|export) /m.test(glue) }));

const root = join(dir, 'snippets');
const files = existsSync(root)
  ? readdirSync(root).flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith('.js')).map((f) => join(root, d, f)))
  : [];
const exported = (code) => [...code.matchAll(/^export (?:async )?function (\w+)\(/gm)].map((m) => m[1]).sort().join(' ');
for (const file of files) {
  const source = readFileSync(file, 'utf8');
  // A statement that follows another on the minified line starts after `;` or `}`.
  const code = minifyJs(file, source, { module: true }).replace(/([;}])export (async )?function /g, '$1\nexport $2function ');
  if (exported(code) !== exported(source)) {
    fail(`${file}: the minified snippet exports [${exported(code)}], the source [${exported(source)}]`);
  }
  writeFileSync(file, code);
}
