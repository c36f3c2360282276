// The packed package in Node 20+, installed from the tarball into a fresh directory and imported
// BY NAME (the exports map's `node` condition): ESM `import` and CommonJS `require`, each
// running the two-agent streamed conversation against the mock LLM, without init().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertConversation } from './assert-conversation.mjs';
import { crateVersion, freshProject, pack, run } from './tarball.mjs';

const conversation = new URL('conversation.mjs', import.meta.url).href;
let mock, dir;
before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  dir = await freshProject((await pack()).tarball, 'node');
});
after(async () => { await mock?.close(); });

async function runNode(file, code) {
  await writeFile(join(dir, file), code);
  const { stdout } = await run(process.execPath, [join(dir, file), mock.url], { cwd: dir, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop());
}

test('Node ESM: import { AgentWorld } from "agent-world-wasm" needs no init()', async () => {
  const report = await runNode('esm.mjs', `
import { AgentWorld, version } from "agent-world-wasm";
import { runConversation } from ${JSON.stringify(conversation)};
const report = await runConversation({ AgentWorld, version, mockUrl: process.argv[2] });
report.entry = import.meta.resolve("agent-world-wasm");
console.log(JSON.stringify(report));
`);
  assert.match(report.entry, /\/node_modules\/agent-world-wasm\/node\/index\.mjs$/);
  assertConversation(report, 'node esm', crateVersion);
});

test('Node CommonJS: require("agent-world-wasm") needs no init()', async () => {
  const report = await runNode('cjs.cjs', `
const { AgentWorld, version } = require("agent-world-wasm");
import(${JSON.stringify(conversation)}).then(async ({ runConversation }) => {
  const report = await runConversation({ AgentWorld, version, mockUrl: process.argv[2] });
  report.entry = require.resolve("agent-world-wasm");
  console.log(JSON.stringify(report));
});
`);
  assert.match(report.entry, /\/node_modules\/agent-world-wasm\/node\/index\.cjs$/);
  assertConversation(report, 'node cjs', crateVersion);
});

test('Node CommonJS where require() cannot load an ES module (Node 20 before 20.19): the entry is self-contained', async () => {
  // The glue's JS snippets (src/bindings/events.rs) are ES modules in wasm-bindgen's output;
  // the package writes them into the CommonJS glue, so nothing is left for require() to refuse.
  await writeFile(join(dir, 'old-cjs.cjs'), `
const { AgentWorld, version } = require("agent-world-wasm");
import(${JSON.stringify(conversation)}).then(async ({ runConversation }) => {
  console.log(JSON.stringify(await runConversation({ AgentWorld, version, mockUrl: process.argv[2] })));
});
`);
  const { stdout } = await run(process.execPath, ['--no-experimental-require-module', join(dir, 'old-cjs.cjs'), mock.url],
    { cwd: dir, timeout: 60_000 });
  assertConversation(JSON.parse(stdout.trim().split('\n').pop()), 'node cjs without require(esm)', crateVersion);
});

test('Node: ESM and CommonJS share one engine instance; init() is a resolved no-op', async () => {
  const out = await runNode('both.mjs', `
import { createRequire } from "node:module";
import init, { AgentWorld } from "agent-world-wasm";
const cjs = createRequire(import.meta.url)("agent-world-wasm");
const world = await AgentWorld.create({ name: "Shared" });
console.log(JSON.stringify({ same: cjs.AgentWorld === AgentWorld, init: await init(),
  cjsInit: await cjs.default(), seen: (await cjs.AgentWorld.list()).map((w) => w.name) }));
`);
  assert.deepEqual(out, { same: true, seen: ['Shared'] });
});
