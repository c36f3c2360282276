// Ring 4: the built package (pkg/nodejs) used from JavaScript, as a Node user would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../../pkg/nodejs/agent_world_wasm.js');
const crateVersion = readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8')
  .match(/^version = "([^"]+)"/m)[1];

test('version() reports the crate version', () => {
  assert.equal(pkg.version(), crateVersion);
});

test('the package ships its types', () => {
  const dts = readFileSync(new URL('../../pkg/nodejs/agent_world_wasm.d.ts', import.meta.url), 'utf8');
  assert.match(dts, /export function version\(\): string;/);
});

test('the .wasm imports its JS functions by short names, each defined once in the glue, and numbers its exports', () => {
  // build_pkg renames wasm-bindgen's `__wbg_<name>_<16 hex digits>` imports (the hashes did not
  // compress: 5.3 KB gzip of the web build); scripts/glue-step.mjs says how.
  for (const dir of ['pkg/web', 'pkg/nodejs']) {
    const at = (f) => new URL(`../../${dir}/${f}`, import.meta.url);
    const module = new WebAssembly.Module(readFileSync(at('agent_world_wasm_bg.wasm')));
    // One module, `a`, the key of the imports object the glue instantiates with.
    const imports = WebAssembly.Module.imports(module);
    assert.deepEqual([...new Set(imports.map((i) => i.module))], ['a'], `${dir}: the imports' modules`);
    assert.ok(imports.length > 100, `${dir}: ${imports.length} imports`);
    assert.deepEqual(WebAssembly.Module.customSections(module, 'producers'), [], `${dir}: producers section`);
    const hashed = imports.filter((i) => /_[0-9a-f]{16}$/.test(i.name)).map((i) => i.name);
    assert.deepEqual(hashed, [], `${dir}: imports with a hashed name`);
    // The closures' entry points, the exports that carried a hash, are numbered (`q<n>`: the
    // npm package's guard keeps those entries quiet after a trap).
    const exported = WebAssembly.Module.exports(module).map((e) => e.name);
    assert.ok(exported.includes('q0'), `${dir}: ${exported}`);
    assert.deepEqual(exported.filter((n) => /h[0-9a-f]{16}/.test(n)), [], `${dir}: exports with a hashed name`);
    const glue = readFileSync(at('agent_world_wasm.js'), 'utf8');
    // The other exports the glue calls are numbered too (`x<n>`), the API's methods' included;
    // every name the glue calls is one.
    assert.deepEqual(exported.filter((n) => /^agentworld_|^__wbindgen_(?:malloc|start)$|^wasm_bindgen__/.test(n)), [],
      `${dir}: exports with wasm-bindgen's name`);
    for (const [, name] of glue.matchAll(/\bwasm\.(\w+)/g)) {
      assert.ok(exported.includes(name), `${dir}: the glue calls wasm.${name}, not an export`);
    }
    for (const { name } of imports) {
      // One property of the imports object: at a line's start, or after `{`/`,` once minified.
      const defined = glue.match(new RegExp(`(?:^\\s*|[{,])${name}: ?function\\b`, 'gm')) ?? [];
      assert.equal(defined.length, 1, `${dir}: import ${name} is defined ${defined.length} times in the glue`);
    }
  }
  // And the renamed module works: the first test's call went through them.
  assert.equal(typeof pkg.version(), 'string');
});

/** The instance methods the declarations give AgentWorld: its class and the interfaces merged
 * into it (a method behind a shared export is declared in one, src/bindings/world.rs). */
function declaredMethods(dts) {
  const names = new Set();
  for (const [, body] of dts.matchAll(/^export (?:class|interface) AgentWorld \{\n([\s\S]*?)\n\}/gm)) {
    for (const [, name] of body.matchAll(/^\s+(\w+)(?:<[^(]*>)?\(.*\): .*;$/gm)) names.add(name);
  }
  return [...names];
}

test('every declared method of AgentWorld is a method of the class, as a class defines one', () => {
  // Most methods share two exports (`__call`, `__get`): the glue step defines them on the
  // class from the declarations (scripts/glue-step.mjs). A method left out, or defined
  // enumerable or nameless, would show here.
  const dts = readFileSync(new URL('../../pkg/nodejs/agent_world_wasm.d.ts', import.meta.url), 'utf8');
  const names = declaredMethods(dts);
  for (const must of ['send', 'on', 'newChat', 'export', 'update', 'info', 'registerTool', 'stop']) {
    assert.ok(names.includes(must), `${must} is not declared: ${names}`);
  }
  const proto = pkg.AgentWorld.prototype;
  for (const name of names) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    assert.ok(d, `AgentWorld.prototype.${name} is missing`);
    assert.equal(typeof d.value, 'function', name);
    assert.equal(d.value.name, name);
    assert.equal(d.enumerable, false, `${name} is enumerable`);
    assert.equal(d.writable && d.configurable, true, name);
  }
});

test('every method behind __call and __get reaches its own body in the Rust dispatch', async () => {
  // The glue step defines these methods from the declarations, and the exports find a
  // method's body by its name (`read_call` and `AgentWorld::get` in src/bindings/world.rs): a
  // declared name the dispatch lacks would fail only when called, with the error of a name
  // that is not a method. Each is called with arguments no method accepts (or ignores).
  const dts = readFileSync(new URL('../../pkg/nodejs/agent_world_wasm.d.ts', import.meta.url), 'utf8');
  const shared = [...dts.matchAll(/^export interface AgentWorld \{\n\s+\/\/ Defined by the glue step[^\n]*: each calls __(?:call|get)\.\n([\s\S]*?)\n\}/gm)]
    .flatMap(([, body]) => [...body.matchAll(/^\s+(\w+)(?:<[^(]*>)?\(.*\): .*;$/gm)].map((m) => m[1]));
  assert.ok(shared.length >= 30, `${shared.length} methods behind __call and __get`);
  const world = await pkg.AgentWorld.create({ name: `Dispatch ${process.pid}`, storage: 'memory' });
  const failure = async (call) => {
    try {
      await call();
      return null;
    } catch (e) {
      return e;
    }
  };
  const notAMethod = [await failure(() => world.__call('noSuchMethod')), await failure(() => world.__get('noSuchMethod'))];
  for (const e of notAMethod) assert.equal(e?.code, 'invalid_input');
  assert.equal(notAMethod[0].message, notAMethod[1].message);
  const probe = Symbol('probe');
  for (const name of shared) {
    const e = await failure(() => world[name](probe, probe));
    assert.notEqual(e?.message, notAMethod[0].message, `${name}() is declared but not dispatched`);
  }
  world.free();
});

test('the glue step fails when the declarations of the shared exports change shape, and runs twice to the same result', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aww-glue-'));
  try {
    const from = new URL('../../pkg/nodejs/', import.meta.url);
    for (const f of ['agent_world_wasm_bg.wasm', 'agent_world_wasm.d.ts', 'agent_world_wasm_bg.wasm.d.ts']) {
      copyFileSync(new URL(f, from), join(dir, f));
    }
    // The glue as the step left it: build_pkg minifies it after (scripts/minify.mjs).
    copyFileSync(new URL('../../target/glue/nodejs/agent_world_wasm.js', import.meta.url), join(dir, 'agent_world_wasm.js'));
    const step = new URL('../../scripts/glue-step.mjs', import.meta.url).pathname;
    const run = () => spawnSync(process.execPath, [step, dir], { encoding: 'utf8' });
    const glue = readFileSync(join(dir, 'agent_world_wasm.js'), 'utf8');
    assert.equal(run().status, 0);
    assert.equal(readFileSync(join(dir, 'agent_world_wasm.js'), 'utf8'), glue, 'a second run changed the glue');
    const dts = readFileSync(join(dir, 'agent_world_wasm.d.ts'), 'utf8');
    writeFileSync(join(dir, 'agent_world_wasm.d.ts'), dts.replace(/each calls __get\./, 'each calls something.'));
    const failed = run();
    assert.notEqual(failed.status, 0);
    assert.match(failed.stderr, /methods declared behind something, not a shared export/);
    // A method behind __call or __get gets two arguments, `(a, b)`: a third parameter would
    // be dropped without a word, so the step refuses the declaration. Nested commas (a
    // callback's parameters, an object type's fields) are not parameters.
    const renamed = dts.replace('renameChat(id: string, name: string): Promise<Chat>;',
      'renameChat(id: string, name: string, options?: { a: 1, b: (x: 1, y: 2) => void }): Promise<Chat>;');
    assert.notEqual(renamed, dts, 'renameChat is not declared as the test expects');
    writeFileSync(join(dir, 'agent_world_wasm.d.ts'), renamed);
    const three = run();
    assert.notEqual(three.status, 0);
    assert.match(three.stderr, /renameChat\(\) is declared behind __call with 3 parameters, and its method passes on two/);
    writeFileSync(join(dir, 'agent_world_wasm.d.ts'), dts.replace('renameChat(id: string, name: string): Promise<Chat>;',
      'renameChat(id: string, name: { a: 1, b: (x: 1, y: 2) => void }): Promise<Chat>;'));
    assert.equal(run().status, 0, 'a declaration of two parameters with commas inside their types was refused');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
