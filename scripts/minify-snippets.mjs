// build_pkg's last step (scripts/env.sh): minifies the JS snippets wasm-bindgen copied into
// `<dir>/snippets/` (the `inline_js` of src/web and src/bindings, which keep their comments
// and names for readers): every page downloads them beside the .wasm, and minified (oxc's
// minifier, through the `rolldown` dev tool) they are 4.5 -> 3.1 KB gzip.
// Each `export function` is left at the start of a line of its own, the shape
// scripts/package.mjs reads when it writes the snippets into the npm entries; the step fails
// if the exported functions are not exactly those of the source. Running it twice is harmless.
//   node scripts/minify-snippets.mjs pkg/web
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { minifySync, parseSync } from 'rolldown/utils';

const dir = process.argv[2];
const fail = (message) => {
  console.error(`minify-snippets: ${message}`);
  process.exit(1);
};
if (!dir) fail('usage: node scripts/minify-snippets.mjs <wasm-pack output directory>');
const root = join(dir, 'snippets');
const files = existsSync(root)
  ? readdirSync(root).flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith('.js')).map((f) => join(root, d, f)))
  : [];
const exported = (code) => [...code.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]).sort().join(' ');

for (const file of files) {
  const source = readFileSync(file, 'utf8');
  const min = minifySync(file, source, { module: true, compress: true, mangle: { toplevel: false } });
  if (min.errors?.length) fail(`${file}: ${min.errors.map((e) => e.message).join('; ')}`);
  // A statement that follows another on the minified line starts after `;` or `}`.
  const code = min.code.replace(/([;}])export function /g, '$1\nexport function ').trimEnd() + '\n';
  const parsed = parseSync(file, code, { sourceType: 'module' });
  if (parsed.errors?.length) fail(`${file}: the minified code does not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  if (exported(code) !== exported(source)) {
    fail(`${file}: the minified snippet exports [${exported(code)}], the source [${exported(source)}]`);
  }
  writeFileSync(file, code);
}
