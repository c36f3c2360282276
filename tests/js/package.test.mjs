// Ring 4: the built package (pkg/nodejs) used from JavaScript, as a Node user would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
      const defined = glue.match(new RegExp(`^\\s*${name}: function\\b`, 'gm')) ?? [];
      assert.equal(defined.length, 1, `${dir}: import ${name} is defined ${defined.length} times in the glue`);
    }
  }
  // And the renamed module works: the first test's call went through them.
  assert.equal(typeof pkg.version(), 'string');
});
