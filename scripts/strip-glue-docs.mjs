// Run by build_pkg (scripts/env.sh) on each wasm-pack output directory: removes the JSDoc
// blocks from the JS glue. wasm-bindgen copies every doc comment of the API into both the
// glue and the `.d.ts`; editors and TypeScript read the `.d.ts` (the package's `types`, and
// the glue's `@ts-self-types` directive for Deno), so in the glue the docs were a second copy
// that every page downloads: 6 KB of the glue's 16 KB gzip. The `.d.ts` keeps them whole.
// The glue's line comments go too: wasm-bindgen writes one per closure type naming its whole
// Rust signature (`// Cast intrinsic for `Closure(Closure { owned: true, … })``), 0.38 KB of
// the web glue's 9.4 KB gzip, for nobody to read.
//
// It also makes the futures task queue (js-sys) wake through a resolved promise's reaction
// instead of `queueMicrotask`. The queue asks the host for a microtask each time a task wakes
// with none scheduled (two or three times per reply when routing), and Node wraps every
// `queueMicrotask` callback in an async resource (an `AsyncResource` made, the async-hooks
// context pushed and popped around it): in the routing bench's fresh process that was the
// host's largest cost per wake, and the promise reaction took 1.18x replies per main-thread
// CPU second (30 fresh-process pairs). The callback runs in the same microtask queue, in the
// same order; it is what js-sys itself does where `queueMicrotask` is missing. A panic's
// trap becomes an unhandled rejection instead of an uncaught exception: both end a Node
// process by default, and both print the error.
//   node scripts/strip-glue-docs.mjs pkg/web
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/strip-glue-docs.mjs <pkg dir>');
// The task queue's wake import, in either shape wasm-bindgen writes imports: a property of the
// imports object (web, nodejs: `__wbg_queueMicrotask_<hash>: function(arg0) {`) or an exported
// function of the `_bg.js` module (bundler: `export function __wbg_queueMicrotask_<hash>(arg0) {`),
// its body `queueMicrotask(arg0);`, or already rewritten when the step runs again.
const WAKE = /((?:__wbg_queueMicrotask_[0-9a-f]+: function|export function __wbg_queueMicrotask_[0-9a-f]+)\((\w+)\) \{\s*)queueMicrotask\(\2\);/g;
const WOKEN = /(?:__wbg_queueMicrotask_[0-9a-f]+: function|export function __wbg_queueMicrotask_[0-9a-f]+)\((\w+)\) \{\s*Promise\.resolve\(\)\.then\(\1\);/g;
// Exactly one per target: the bundler target's `agent_world_wasm.js` only re-exports, its
// imports are in `agent_world_wasm_bg.js`.
let wakes = 0;
const outs = [];
for (const name of ['agent_world_wasm.js', 'agent_world_wasm_bg.js']) {
  const file = `${dir}/${name}`;
  if (!existsSync(file)) continue;
  const glue = readFileSync(file, 'utf8');
  // A block that starts a line with `/**` and ends at the first `*/`: the generated glue puts
  // docs nowhere else, and a doc comment cannot hold `*/` (the JS would not parse).
  let out = glue.replace(/^[ \t]*\/\*\*(?:[^*]|\*(?!\/))*\*\/[ \t]*\r?\n/gm, '');
  if (/^[ \t]*\/\*\*/m.test(out)) throw new Error(`${file}: a JSDoc block was left (the glue changed shape)`);
  // A line that starts with `//` is a comment: the glue has no multi-line string or template
  // literal a line of which could start so (checked: every line's backticks pair up).
  if (out.split('\n').some((line) => (line.match(/`/g) ?? []).length % 2)) {
    throw new Error(`${file}: a template literal spans lines (the glue changed shape)`);
  }
  out = out.replace(/^[ \t]*\/\/.*\r?\n/gm, '');
  wakes += [...out.matchAll(WAKE)].length + [...out.matchAll(WOKEN)].length;
  out = out.replace(WAKE, '$1Promise.resolve().then($2);');
  const directive = glue.split('\n')[0];
  if (directive.startsWith('/* @ts-self-types') && !out.startsWith(directive)) {
    throw new Error(`${file}: the @ts-self-types directive was lost`);
  }
  outs.push([file, out]);
}
if (wakes !== 1) throw new Error(`${dir}: ${wakes} queueMicrotask imports of the task queue, expected 1 (the glue changed shape)`);
for (const [file, out] of outs) writeFileSync(file, out);
