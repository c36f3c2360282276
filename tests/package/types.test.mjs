// The packed package's TypeScript declarations as a TypeScript user gets them: a fresh project
// with the tarball installed, code importing "agent-world-wasm" BY NAME, compiled with
// `tsc --strict` under the resolutions projects use (bundler for Vite/webpack, NodeNext ESM and
// CommonJS). Each must pick the declarations of the entry that runtime loads (`--listFiles`),
// accept real usage, and reject a wrong call (`@ts-expect-error` fails when types are `any`).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freshProject, pack, root, run } from './tarball.mjs';

const tsc = new URL('node_modules/typescript/bin/tsc', root).pathname;
let dir;
before(async () => { dir = await freshProject((await pack()).tarball, 'types'); });

const USAGE = `
  const world = await AgentWorld.create({ name: "Typed", turnLimit: 3 });
  world.configureProvider("openai", { apiKey: "sk-...", baseUrl: "http://127.0.0.1:1/v1" });
  const off: () => void = world.on("sse", (e) => { if (e.type === "chunk") { const s: string | undefined = e.content; void s; } });
  off();
  const page = await world.messages(world.currentChat()?.id ?? "", { limit: 5 });
  const sender: string | undefined = page[0]?.sender;
  world.setTimeouts(1000, 500);
  const v: string = version();
  // @ts-expect-error send() takes a string
  await world.send(42);
  void sender; void v;
`;

async function compile(file, code, resolution) {
  await writeFile(join(dir, file), code);
  const args = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--target', 'es2022',
    '--lib', 'es2022,dom', '--listFiles',
    ...(resolution === 'bundler' ? ['--module', 'esnext', '--moduleResolution', 'bundler']
      : ['--module', 'nodenext', '--moduleResolution', 'nodenext']), file];
  const { stdout } = await run(process.execPath, [tsc, ...args], { cwd: dir, timeout: 90_000 })
    .catch((e) => assert.fail(`tsc failed on ${file}:\n${e.stdout}${e.stderr}`));
  return stdout.split('\n').filter((l) => l.includes('/node_modules/agent-world-wasm/'))
    .map((l) => l.slice(l.indexOf('/node_modules/agent-world-wasm/') + '/node_modules/agent-world-wasm/'.length));
}

test('bundler resolution (Vite, webpack) types the web entry, init() included', async () => {
  const used = await compile('bundler.ts', `import init, { AgentWorld, version } from "agent-world-wasm";
const ready = await init();
const memory: WebAssembly.Memory = ready.memory;
void memory;
${USAGE}
export {};
`, 'bundler');
  assert.deepEqual(used, ['web/agent_world_wasm.d.ts']);
});

test('NodeNext ESM types the node entry (.d.mts)', async () => {
  const used = await compile('esm.mts', `import init, { AgentWorld, version } from "agent-world-wasm";
await init();
${USAGE}
`, 'nodenext');
  assert.deepEqual(used, ['node/index.d.mts']);
});

test('NodeNext CommonJS types the node entry (.d.cts)', async () => {
  const used = await compile('cjs.cts', `import { AgentWorld, version } from "agent-world-wasm";
async function main(): Promise<void> {
${USAGE}
}
void main();
`, 'nodenext');
  assert.deepEqual(used, ['node/index.d.cts']);
});
