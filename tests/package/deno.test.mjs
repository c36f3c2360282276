// The packed package in Deno: a fresh directory with a package.json and the tarball in
// node_modules (Deno's "manual" node_modules mode), imported BY NAME (the `deno` condition),
// running the two-agent streamed conversation against the mock LLM without init() and without
// --allow-read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertConversation } from './assert-conversation.mjs';
import { crateVersion, freshProject, pack, root, run } from './tarball.mjs';

let mock, dir;
before(async () => {
  mock = await startMockLlm({ port: 0, delayMs: 0 });
  dir = await freshProject((await pack()).tarball, 'deno');
});
after(async () => { await mock?.close(); });

test('Deno: import { AgentWorld } from "agent-world-wasm" is ready without init() or --allow-read', async () => {
  const conversation = new URL('conversation.mjs', import.meta.url);
  await writeFile(join(dir, 'main.js'), `
import { AgentWorld, version } from "agent-world-wasm";
import { runConversation } from ${JSON.stringify(conversation.href)};
const report = await runConversation({ AgentWorld, version, mockUrl: Deno.args[0] });
report.entry = import.meta.resolve("agent-world-wasm");
report.runtime = "deno " + Deno.version.deno;
console.log(JSON.stringify(report));
`);
  const deno = new URL('.tools/deno/node_modules/.bin/deno', root).pathname;
  // No --allow-read: the package's .wasm is part of the module graph, not a file read.
  const { stdout } = await run(deno, ['run', '--quiet', '--no-prompt', '--no-lock',
    '--allow-net=127.0.0.1', 'main.js', mock.url],
  { cwd: dir, timeout: 60_000, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } });
  const report = JSON.parse(stdout.trim().split('\n').pop());
  assert.match(report.runtime, /^deno \d/);
  assert.match(report.entry, /\/node_modules\/agent-world-wasm\/deno\.js$/);
  assertConversation(report, report.runtime, crateVersion);
});
