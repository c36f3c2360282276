// build_pkg's glue step (scripts/env.sh runs it on each wasm-pack output directory): what
// wasm-bindgen writes is made smaller and, in one place, faster, without changing what it
// does: the glue loses its docs, line comments and indentation; the task queue wakes through
// a promise reaction; the .wasm's imports and the exports the glue calls get short names; most
// instance methods of AgentWorld share two exports, and the step defines them on the class.
// Each part fails loudly if the glue changes shape, and running the step twice changes
// nothing.
//
// The docs: wasm-bindgen copies every doc comment of the API into both the
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
//
// And it gives the imports of the .wasm short names. wasm-bindgen names each import after its
// JS name and a 16-hex-digit hash (`__wbg_get_2080c49015e35254`); the ~160 names appear once in
// the .wasm's import section and once in the glue, and the hashes do not compress: 5.3 KB of
// the web build's 306.7 KB gzip (wasm 3.2, glue 2.2). Each import of the glue's module whose
// name carries such a hash becomes `w<n>` (n in base 36, in import order, so the web and
// nodejs builds' .wasm stay identical) in the import section and where the glue defines it;
// so do its numbered casts (`__wbindgen_generic_000000000000000a`); the step fails if a name is
// not defined exactly once or such a name is left. The exports that carry a hash, the entry
// points of closures (`wasm_bindgen__convert__closures_____invoke__h<hash>`), are numbered
// the same way in the export section, the glue and the declarations: 0.40 KB more. So are the
// other exports the glue calls (`agentworld_addAgent` becomes `x1`; scripts/package.mjs reads
// the async ones' names from the glue), with `q<n>` for the entries src/bindings/guard.js keeps
// quiet (the closures' and the frees): 0.47 KB more. In the web and nodejs builds the
// imports' module (`./agent_world_wasm_bg.js`, repeated in every import entry) is `a`, the
// key of the imports object the glue instantiates with; and the .wasm loses the toolchain's
// `producers` and `target_features` notes, which no runtime reads.
//
// And it defines most of AgentWorld's instance methods. wasm-bindgen generates code per export
// on both sides (the borrow of `self`, the argument and result shims, a glue method); the async
// methods but `send` go through one export, `__call(name, a, b)`, and the synchronous ones
// through `__get(name, a, b)` (2.1 KB gzip less than 35 exports). Their names come from the
// declarations, where their docs are (see below); a declaration there with more than two
// parameters fails the step, as the method would drop the third argument.
//   node scripts/glue-step.mjs pkg/web
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/glue-step.mjs <pkg dir>');
// The task queue's wake import, in either shape wasm-bindgen writes imports: a property of the
// imports object (web, nodejs: `__wbg_queueMicrotask_<hash>: function(arg0) {`) or an exported
// function of the `_bg.js` module (bundler: `export function __wbg_queueMicrotask_<hash>(arg0) {`),
// its body `queueMicrotask(arg0);`, or already rewritten when the step runs again.
const WAKE = /((?:__wbg_queueMicrotask_[0-9a-f]+: function|export function __wbg_queueMicrotask_[0-9a-f]+)\((\w+)\) \{\s*)queueMicrotask\(\2\);/g;
// Rewritten, its name may be a short one already (see `shortImports`).
const WOKEN = /(?:\w+: function|export function \w+)\((\w+)\) \{\s*Promise\.resolve\(\)\.then\(\1\);/g;
// The instance methods of AgentWorld behind its two shared exports, `__call` (the async ones)
// and `__get` (src/bindings/world.rs): each file of src/bindings declares its methods with
// their docs in `interface AgentWorld` blocks (`TS_CALL`, `TS_GET`) opened by a line comment
// naming this step and the export. Each method becomes a method of the class that calls the
// export with its name, defined as the class defines its own (not enumerable) and named as
// the method.
const SHARED = [['__call', []], ['__get', []]];
const declarations = readFileSync(`${dir}/agent_world_wasm.d.ts`, 'utf8');
// Every method an `interface AgentWorld` block declares (merged into the class's type): each
// must be one the class defines itself or one defined here, or the type would promise a
// method the class does not have.
// A method's declaration in such a block: its whole line, and its name.
const METHOD = /^\s+(\w+)(?:<[^(]*>)?\(.*\): .*;$/gm;
const MERGED = [...declarations.matchAll(/^export interface AgentWorld \{\n([\s\S]*?)\n\}/gm)]
  .flatMap((m) => [...m[1].matchAll(METHOD)].map((d) => d[1]));
for (const m of declarations
  .matchAll(/^export interface AgentWorld \{\n\s+\/\/ Defined by the glue step [^\n]*: each calls (\w+)\.\n([\s\S]*?)\n\}/gm)) {
  const names = SHARED.find(([e]) => e === m[1])?.[1];
  if (!names) throw new Error(`${dir}: methods declared behind ${m[1]}, not a shared export (the glue changed shape)`);
  for (const [line, name] of m[2].matchAll(METHOD)) {
    // The method the step defines passes on two arguments, `(a, b)`: a third would be dropped.
    const count = parameters(line);
    if (count > 2) throw new Error(`${dir}: ${name}() is declared behind ${m[1]} with ${count} parameters, and its method passes on two (src/bindings: take the rest in an options object)`);
    names.push(name);
  }
}
if (SHARED.some(([, names]) => names.length < 10)) {
  throw new Error(`${dir}: the declarations list ${SHARED.map(([e, n]) => `${n.length} methods behind ${e}`).join(' and ')} (a TS_CALL or TS_GET block changed shape)`);
}
const DISPOSE = 'if (Symbol.dispose) AgentWorld.prototype[Symbol.dispose] = AgentWorld.prototype.free;\n';
const DEFINE = SHARED.map(([e, names]) => `for (const m of ${JSON.stringify(names)}) Object.defineProperty(AgentWorld.prototype, m, { value: { [m](a, b) { return this.${e}(m, a, b); } }[m], writable: true, configurable: true });\n`).join('');
let defined = 0;
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
  // A line that starts with `//` is a comment, and a line's leading blanks are not part of
  // a string: the glue has no multi-line string or template literal (checked: every line's
  // backticks pair up).
  if (out.split('\n').some((line) => (line.match(/`/g) ?? []).length % 2)) {
    throw new Error(`${file}: a template literal spans lines (the glue changed shape)`);
  }
  out = out.replace(/^[ \t]*\/\/.*\r?\n/gm, '');
  // So is the indentation (0.41 KB gzip of the web glue): no line is inside a string.
  out = out.replace(/^[ \t]+/gm, '');
  if (out.includes(DEFINE)) {
    defined++;
  } else if (out.includes(DISPOSE)) {
    for (const [e, names] of SHARED) {
      if (!out.includes(`\n${e}(method, a, b) {\n`)) throw new Error(`${file}: the class has no ${e}(method, a, b) (the glue changed shape)`);
      for (const m of names) {
        if (out.includes(`\n${m}(`)) throw new Error(`${file}: the class defines ${m}() itself, which ${e} serves`);
      }
    }
    const missing = MERGED.filter((m) => !SHARED.some(([, names]) => names.includes(m)) && !out.includes(`\n${m}(`));
    if (missing.length) throw new Error(`${file}: ${missing.join(', ')} declared but neither a method of the class nor behind __call or __get (a TS_CALL or TS_GET block changed shape)`);
    out = out.replace(DISPOSE, DISPOSE + DEFINE);
    defined++;
  }
  wakes += [...out.matchAll(WAKE)].length + [...out.matchAll(WOKEN)].length;
  out = out.replace(WAKE, '$1Promise.resolve().then($2);');
  const directive = glue.split('\n')[0];
  if (directive.startsWith('/* @ts-self-types') && !out.startsWith(directive)) {
    throw new Error(`${file}: the @ts-self-types directive was lost`);
  }
  outs.push([file, out]);
}
if (defined !== 1) throw new Error(`${dir}: the AgentWorld class was found ${defined} times (the glue changed shape)`);
if (wakes !== 1) throw new Error(`${dir}: ${wakes} queueMicrotask imports of the task queue, expected 1 (the glue changed shape)`);
const wasmFile = `${dir}/agent_world_wasm_bg.wasm`;
const dts = [`${dir}/agent_world_wasm.d.ts`, `${dir}/agent_world_wasm_bg.wasm.d.ts`].filter(existsSync)
  .map((file) => [file, readFileSync(file, 'utf8')]);
const wasm = shortImports(readFileSync(wasmFile), outs, dts);
for (const [file, out] of [...outs, ...dts]) writeFileSync(file, out);
writeFileSync(wasmFile, wasm);

/** How many parameters a method's declaration (`name<T>(a: A, b?: B): R;`) lists: the commas
 * of its parameter list that no bracket of a type (`<>`, `()`, `{}`, `[]`) holds, plus one
 * unless the list is empty. The `>` of an arrow (`=>`) closes nothing. */
function parameters(declaration) {
  let at = declaration.indexOf('(', declaration.search(/\w/));
  // The declaration's own type parameters may hold a `(` (a function type): skip them.
  const generic = declaration.match(/^\s*\w+</);
  let depth = 0;
  if (generic) {
    for (at = generic[0].length - 1; at < declaration.length; at++) {
      const c = declaration[at];
      if ('<({['.includes(c)) depth++;
      else if (')}]'.includes(c) || (c === '>' && declaration[at - 1] !== '=')) depth--;
      if (depth === 0) break;
    }
    at = declaration.indexOf('(', at);
  }
  let count = 0;
  let empty = true;
  for (depth = 0, at++; at < declaration.length; at++) {
    const c = declaration[at];
    if (depth === 0 && c === ')') return empty ? 0 : count + 1;
    if (!/\s/.test(c)) empty = false;
    if ('<({['.includes(c)) depth++;
    else if (')}]'.includes(c) || (c === '>' && declaration[at - 1] !== '=')) depth--;
    else if (c === ',' && depth === 0) count++;
  }
  throw new Error(`${dir}: the declaration ${declaration.trim()} has no closing parenthesis (a TS_CALL or TS_GET block changed shape)`);
}

/** The .wasm with its hashed imports renamed, and `outs` (the glue files) with them renamed
 * where they are defined: an imports-object property (`__wbg_x_<hash>: function(`, web and
 * nodejs) or an exported function (`export function __wbg_x_<hash>(`, bundler). The hashed
 * exports (the closures' entry points, `…_invoke__h<hash>`) are numbered too, everywhere the
 * glue and `dts` (the declarations) name them. */
function shortImports(bytes, outs, dts) {
  // Also wasm-bindgen's numbered casts (`__wbindgen_generic_000000000000000a`).
  const HASHED = /^__wb\w*_[0-9a-f]{16}$/;
  const names = new Map();
  // The closures' entry points.
  const INVOKE = /^wasm_bindgen__convert__closures_____invoke__h[0-9a-f]{16}(?:_\d+)?$/;
  const exports = new Map();
  // The module the imports come from is a key of the imports object the web and nodejs glue
  // pass to the instance: `a` there (the bundler target's is a real file the bundler loads).
  const MODULE = './agent_world_wasm_bg.js';
  const KEY = `"${MODULE}": import0,`;
  const keyed = outs.filter(([, out]) => out.includes(KEY));
  if (keyed.length > 1 || (keyed.length === 1 && keyed[0][1].split(KEY).length !== 2)) {
    throw new Error(`${dir}: the imports object's key is not named once (the glue changed shape)`);
  }
  const module = keyed.length ? 'a' : MODULE;
  if (keyed.length) keyed[0][1] = keyed[0][1].replace(KEY, `${module}: import0,`);
  // The other exports the glue calls (`wasm.<name>`) get numbered names too, in export order:
  // `q<n>` for the entries src/bindings/guard.js keeps quiet (the closures' entry points above,
  // the frees: the event loop and the GC call them), `x<n>` for the rest (the API's methods'
  // `agentworld_addAgent`, wasm-bindgen's intrinsics). Kept: the memory, and
  // `isAgentWorldError` (the guard answers it itself after a trap).
  const QUIET = /^(?:__wbg_\w+_free|__wbindgen_free|__wbindgen_destroy_closure|__externref_table_dealloc)$/;
  const KEEP = /^(?:memory|isAgentWorldError)$/;
  const called = new Set(outs.flatMap(([, out]) => [...out.matchAll(/\bwasm\.(\w+)\b/g)].map((m) => m[1])));
  const numbered = new Map();
  // Run again on its own output: the names are numbered already.
  const again = [...called].some((n) => /^[qx][0-9a-z]+$/.test(n));
  const wasm = renameImports(bytes, (from, name) => {
    if (from !== MODULE) return [from, name];
    if (!HASHED.test(name)) return [module, name];
    const short = `w${names.size.toString(36)}`;
    names.set(name, short);
    return [module, short];
  }, (name) => {
    if (again) return name;
    if (INVOKE.test(name) || (QUIET.test(name) && called.has(name))) {
      const short = `q${exports.size.toString(36)}`;
      exports.set(name, short);
      return short;
    }
    if (KEEP.test(name) || !called.has(name)) return name;
    const short = `x${numbered.size.toString(36)}`;
    numbered.set(name, short);
    return short;
  });
  for (const [name, short] of exports) if (QUIET.test(name)) numbered.set(name, short);
  // An entry point is named where the glue wraps it (a function of the same name) and calls
  // it, and in the declarations of the raw exports: every whole-word use. No other name of
  // the glue has the `q<n>` shape.
  if (!again && outs.some(([, out]) => /\bq[0-9a-z]{1,2}\b/.test(out))) {
    throw new Error(`${dir}: the glue has a name of the shape q<n> already (the glue changed shape)`);
  }
  for (const entry of [...outs, ...dts]) {
    entry[1] = entry[1].replace(/\bwasm_bindgen__convert__closures_____invoke__h[0-9a-f]{16}(?:_\d+)?\b/g,
      (name) => exports.get(name) ?? name);
  }
  // A numbered export is named where the glue calls it (`wasm.<name>`), and in the raw ABI's
  // declarations: `InitOutput` (`readonly <name>:`) and the .wasm's (`export const <name>:`).
  // Not elsewhere in the declarations: `version` is also the API's function there.
  for (const entry of outs) {
    entry[1] = entry[1].replace(/\bwasm\.(\w+)\b/g, (all, name) => (numbered.has(name) ? `wasm.${numbered.get(name)}` : all));
  }
  for (const entry of dts) {
    entry[1] = entry[1].replace(/^(\s*readonly |export const )(\w+):/gm, (all, head, name) => (numbered.has(name) ? `${head}${numbered.get(name)}:` : all));
  }
  const unknown = [...called].filter((n) => !KEEP.test(n) && !exports.has(n) && !numbered.has(n));
  if (unknown.length && !again) throw new Error(`${dir}: the glue calls ${unknown.join(', ')}, not an export of the .wasm (the glue changed shape)`);
  for (const [name, short] of names) {
    const def = new RegExp(`^([ \\t]*)${name}(: function\\b)|^export function ${name}\\(`, 'm');
    const where = outs.filter(([, out]) => out.includes(name));
    const count = where.reduce((n, [, out]) => n + out.split(name).length - 1, 0);
    if (count !== 1 || !def.test(where[0][1])) {
      throw new Error(`${dir}: import ${name} is named ${count} times in the glue, expected once where it is defined (the glue changed shape)`);
    }
    where[0][1] = where[0][1].replace(def, (m, indent) =>
      (indent === undefined ? `export function ${short}(` : `${indent}${short}: function`));
  }
  for (const [file, out] of outs) {
    const left = out.match(/\b__wb\w*_[0-9a-f]{16}\b|\bwasm_bindgen__convert__closures_____invoke__h[0-9a-f]{16}/);
    if (left) throw new Error(`${file}: ${left[0]} is not an import of the .wasm (the glue changed shape)`);
  }
  return wasm;
}

/** `bytes` (a .wasm) with each import's module and name replaced by `rename(module, name)`
 * (a pair), each export's name by `renameExport(name)`, and without the `producers` and
 * `target_features` custom sections; every other section is copied as it is. Reads the
 * import section's entries exactly (function, table, memory and global imports), and fails on
 * anything else. */
function renameImports(bytes, rename, renameExport) {
  const leb = (at) => {
    let value = 0;
    let shift = 0;
    let b;
    do {
      b = bytes[at++];
      value += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return [value, at];
  };
  const uleb = (value) => {
    const out = [];
    do {
      let b = value % 128;
      value = Math.floor(value / 128);
      if (value) b |= 0x80;
      out.push(b);
    } while (value);
    return Buffer.from(out);
  };
  const fail = (why) => { throw new Error(`${dir}: ${why} in the .wasm's import section`); };
  if (bytes.readUInt32LE(0) !== 0x6d736100) fail('no wasm magic');
  const parts = [bytes.subarray(0, 8)];
  let imports = 0;
  for (let at = 8; at < bytes.length;) {
    const id = bytes[at];
    const [size, body] = leb(at + 1);
    const end = body + size;
    if (id === 0) {
      // Custom sections: the toolchain's `producers` and `target_features` notes go (no
      // runtime reads them); any other is kept.
      const [nameLen, nameAt] = leb(body);
      const name = bytes.toString('utf8', nameAt, nameAt + nameLen);
      if (name !== 'producers' && name !== 'target_features') parts.push(bytes.subarray(at, end));
      at = end;
      continue;
    }
    if (id === 7 && renameExport) {
      let [count, p] = leb(body);
      const entries = [uleb(count)];
      for (let i = 0; i < count; i++) {
        const [nameLen, nameAt] = leb(p);
        const name = bytes.toString('utf8', nameAt, nameAt + nameLen);
        const descAt = nameAt + nameLen;
        [, p] = leb(descAt + 1); // kind, index
        const renamed = Buffer.from(renameExport(name), 'utf8');
        entries.push(uleb(renamed.length), renamed, bytes.subarray(descAt, p));
      }
      if (p !== end) fail('an export section length that does not add up');
      const payload = Buffer.concat(entries);
      parts.push(Buffer.from([7]), uleb(payload.length), payload);
      at = end;
      continue;
    }
    if (id !== 2) {
      parts.push(bytes.subarray(at, end));
      at = end;
      continue;
    }
    imports++;
    let [count, p] = leb(body);
    const entries = [uleb(count)];
    for (let i = 0; i < count; i++) {
      const [moduleLen, moduleAt] = leb(p);
      const module = bytes.toString('utf8', moduleAt, moduleAt + moduleLen);
      const [nameLen, nameAt] = leb(moduleAt + moduleLen);
      const name = bytes.toString('utf8', nameAt, nameAt + nameLen);
      const descAt = nameAt + nameLen;
      p = descAt + 1;
      const limits = () => {
        const flags = bytes[p++];
        [, p] = leb(p);
        if (flags & 1) [, p] = leb(p);
      };
      switch (bytes[descAt]) {
        case 0: [, p] = leb(p); break; // function: its type index
        case 1: if (bytes[p] !== 0x70 && bytes[p] !== 0x6f) fail('a table of another type'); p++; limits(); break;
        case 2: limits(); break; // memory
        case 3: // a value type (a number type, v128, funcref or externref), then mutability
          if (![0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f].includes(bytes[p])) fail('a global of another type');
          p += 2;
          break;
        default: fail(`an import of kind ${bytes[descAt]}`);
      }
      const [toModule, toName] = rename(module, name).map((s) => Buffer.from(s, 'utf8'));
      entries.push(uleb(toModule.length), toModule, uleb(toName.length), toName, bytes.subarray(descAt, p));
    }
    if (p !== end) fail('a length that does not add up');
    const payload = Buffer.concat(entries);
    parts.push(Buffer.from([2]), uleb(payload.length), payload);
    at = end;
  }
  if (imports !== 1) fail(`${imports} import sections`);
  return Buffer.concat(parts);
}
