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
