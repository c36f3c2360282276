// Run by build_pkg (scripts/env.sh) on each wasm-pack output directory: removes the JSDoc
// blocks from the JS glue. wasm-bindgen copies every doc comment of the API into both the
// glue and the `.d.ts`; editors and TypeScript read the `.d.ts` (the package's `types`, and
// the glue's `@ts-self-types` directive for Deno), so in the glue the docs were a second copy
// that every page downloads: 6 KB of the glue's 16 KB gzip. The `.d.ts` keeps them whole.
//   node scripts/strip-glue-docs.mjs pkg/web
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/strip-glue-docs.mjs <pkg dir>');
for (const name of ['agent_world_wasm.js', 'agent_world_wasm_bg.js']) {
  const file = `${dir}/${name}`;
  if (!existsSync(file)) continue;
  const glue = readFileSync(file, 'utf8');
  // A block that starts a line with `/**` and ends at the first `*/`: the generated glue puts
  // docs nowhere else, and a doc comment cannot hold `*/` (the JS would not parse).
  const out = glue.replace(/^[ \t]*\/\*\*(?:[^*]|\*(?!\/))*\*\/[ \t]*\r?\n/gm, '');
  if (/^[ \t]*\/\*\*/m.test(out)) throw new Error(`${file}: a JSDoc block was left (the glue changed shape)`);
  const directive = glue.split('\n')[0];
  if (directive.startsWith('/* @ts-self-types') && !out.startsWith(directive)) {
    throw new Error(`${file}: the @ts-self-types directive was lost`);
  }
  writeFileSync(file, out);
}
