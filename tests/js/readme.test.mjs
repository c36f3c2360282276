// The README's quick start, executed as written against the mock LLM: only the import path
// (the assembled package's Node entry, pkg/npm: scripts/package.sh) and the provider's baseUrl
// (the mock) are changed. tests/package/quickstart.test.mjs runs it from the packed tarball.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertQuickStartOutput } from '../support/quickstart.mjs';

const root = new URL('../../', import.meta.url);

test('the README quick start runs and both agents stream their replies', async () => {
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const snippet = section.match(/```js\n([\s\S]*?)```/)[1];
  const mock = await startMockLlm({ port: 0, delayMs: 0 });
  try {
    const pkg = new URL('pkg/npm/node/index.mjs', root).pathname;
    const code = snippet
      .replace('from "agent-world-wasm"', `from ${JSON.stringify(pkg)}`)
      .replace('{ apiKey: "sk-..." }', `{ apiKey: "sk-...", baseUrl: ${JSON.stringify(`${mock.url}/v1`)} }`);
    assert.notEqual(code, snippet, 'the snippet changed shape: update this test');
    const dir = await mkdtemp(join(tmpdir(), 'aww-readme-'));
    const file = join(dir, 'quickstart.mjs');
    await writeFile(file, code);
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
    assertQuickStartOutput(stdout);
  } finally {
    await mock.close();
  }
});

// The "Tools" snippet, with the OpenAI provider swapped for a scripted custom provider that
// calls the tool on its first step and answers from the result on its second (the rest as
// written): the tool really runs, the model gets its result, the events and the published
// reply are printed as the README says.
test('the README tools snippet runs: the tool is called and its result answers the question', async () => {
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const section = readme.slice(readme.indexOf('## Tools'));
  const snippet = section.match(/```js\n([\s\S]*?)```/)[1];
  const pkg = new URL('pkg/npm/node/index.mjs', root).pathname;
  const scripted = `world.registerProvider({
    async *stream(request) {
      const last = request.messages.at(-1);
      if (last.role === "tool") { yield \`It is \${JSON.parse(last.content).tempC} °C in Paris.\`; return; }
      if (!request.tools.some((t) => t.name === "get_weather")) throw new Error("tool not offered");
      yield { toolCalls: [{ id: "c1", name: "get_weather", args: { city: "Paris" } }] };
    },
  });`;
  const code = snippet
    .replace('from "agent-world-wasm"', `from ${JSON.stringify(pkg)}`)
    .replace('world.configureProvider("openai", { apiKey: "sk-..." });', scripted)
    .replace('provider: "openai"', 'provider: "custom"');
  assert.equal(code.match(/scripted|registerProvider|provider: "custom"/g)?.length, 2,
    'the snippet changed shape: update this test');
  const dir = await mkdtemp(join(tmpdir(), 'aww-readme-tools-'));
  const file = join(dir, 'tools.mjs');
  await writeFile(file, code);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
  const lines = stdout.trim().split('\n');
  assert.deepEqual(lines, [
    '[HUMAN] What is the weather in Paris? (0 tool calls)',
    'calling get_weather({"city":"Paris"})',
    'result: {"city":"Paris","live":true,"sky":"clear","tempC":21}', // keys in serde_json's order
    '[forecaster] It is 21 °C in Paris. (1 tool calls)',
  ], stdout);
});
