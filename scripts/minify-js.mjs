// One JS file minified the way build_pkg (scripts/minify.mjs) and scripts/package.mjs ship
// it: oxc's minifier (the `rolldown` dev tool), names at the top level kept (the exports, and
// the functions the glue and its snippets share), the first line kept first when it is a
// `/* … */` directive (the glue's `@ts-self-types`, which Deno reads). The result must parse.
import { minifySync, parseSync } from 'rolldown/utils';

export function minifyJs(file, source, { module }) {
  const first = source.split('\n', 1)[0];
  const directive = /^\/\*.*\*\/$/.test(first) ? `${first}\n` : '';
  const min = minifySync(file, source, { module, compress: true, mangle: { toplevel: false } });
  if (min.errors?.length) throw new Error(`${file}: ${min.errors.map((e) => e.message).join('; ')}`);
  const code = `${directive}${min.code.trimEnd()}\n`;
  const parsed = parseSync(file, code, { sourceType: module ? 'module' : 'script' });
  if (parsed.errors?.length) throw new Error(`${file}: the minified code does not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  return code;
}
