// The published TypeScript declarations (pkg/npm, made by scripts/package.sh): no `any` and no
// snake_case parameter name in any of them; strict-mode usage compiles and wrong usage does not,
// and the declared shapes match the objects the package really returns. (tests/package/
// types.test.mjs compiles code that imports the packed package by name.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';

const root = new URL('../../', import.meta.url);
const tsc = new URL('node_modules/.bin/tsc', root).pathname;
const dts = (target) => readFileSync(new URL(`pkg/${target}/agent_world_wasm.d.ts`, root), 'utf8');

// Every declaration file the published package (pkg/npm, scripts/package.sh) ships.
const PUBLISHED = ['web/agent_world_wasm.d.ts', 'node/index.d.mts', 'node/index.d.cts', 'deno.d.ts', 'workerd.d.ts'];
const published = (file) => readFileSync(new URL(`pkg/npm/${file}`, root), 'utf8');

/** The declarations without comments. */
const uncommented = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/** The parameter names of every function and method signature in `text`: the identifiers that
 * start each top-level entry of a parameter list (object-type keys inside are not parameters). */
function parameterNames(text) {
  const names = [];
  const code = uncommented(text);
  for (const m of code.matchAll(/(?:\bfunction\s*\w*|^\s*(?:static\s+|readonly\s+)?(?:\[[^\]]+\]|\w+)\s*)(?:<[^>]*>)?\(/gm)) {
    let depth = 0;
    let start = m.index + m[0].length;
    for (let i = start; i < code.length; i++) {
      const c = code[i];
      if ('({[<'.includes(c)) depth++;
      else if (')}]'.includes(c) || (c === '>' && code[i - 1] !== '=')) {
        if (depth === 0) { names.push(code.slice(start, i)); break; }
        depth--;
      } else if (c === ',' && depth === 0) { names.push(code.slice(start, i)); start = i + 1; }
    }
  }
  return names.map((p) => p.trim().match(/^(?:\.\.\.)?(\w+)/)?.[1]).filter(Boolean);
}

for (const file of PUBLISHED) {
  test(`the published ${file} has no \`any\` (the raw ABI table included)`, () => {
    const offending = uncommented(published(file)).split('\n').filter((l) => /\bany\b/.test(l));
    assert.deepEqual(offending, []);
  });
}

test('the published declarations name every parameter in camelCase', () => {
  for (const file of PUBLISHED) {
    const names = parameterNames(published(file));
    if (file.endsWith('agent_world_wasm.d.ts') || file.startsWith('node/')) {
      // The signatures are really parsed: a known method's parameters are found.
      assert.ok(names.includes('chatId') && names.includes('totalMs'), `${file}: ${names}`);
    }
    assert.deepEqual(names.filter((n) => n.includes('_')), [], `${file}: snake_case parameter names`);
  }
  // The check itself: a Rust name in a signature is caught, an option key is not.
  assert.deepEqual(parameterNames('export function f(chat_id: string, o?: { module_or_path: X }): void;\n' +
    '  messages(chat_id: string, options?: A | B): Promise<Message[]>;'), ['chat_id', 'o', 'chat_id', 'options']);
});

const compile = (file) => promisify(execFile)(tsc, ['--noEmit', '--strict', '--target', 'es2022',
  '--module', 'es2022', '--moduleResolution', 'bundler', '--lib', 'es2022,dom', '--skipLibCheck', 'false',
  new URL(file, import.meta.url).pathname], { timeout: 60_000 });

test('strict TypeScript accepts real usage', async () => {
  await compile('types/usage.ts');
});

test('strict TypeScript rejects wrong usage (the types are not vacuous)', async () => {
  await assert.rejects(compile('types/wrong.ts'), (e) => {
    const out = String(e.stdout);
    assert.match(out, /wrong\.ts\(4,/, 'send(42) must be an error');
    assert.match(out, /wrong\.ts\(5,/, 'an unknown provider must be an error');
    assert.match(out, /wrong\.ts\(6,/, 'an sse event has no turnLimit');
    assert.match(out, /wrong\.ts\(7,/, 'an external-change event has no chatId');
    assert.match(out, /wrong\.ts\(8,/, 'an approval-resolved event has no toolName');
    assert.match(out, /wrong\.ts\(9,/, 'disk_full is not a StorageErrorReason');
    assert.match(out, /wrong\.ts\(10,/, 'minimum is not in the supported schema subset');
    assert.match(out, /wrong\.ts\(11,/, 'tool parameters must be an object schema');
    assert.match(out, /wrong\.ts\(12,/, 'a start event has no content');
    return true;
  });
});

/** The keys of `interface Name { ... }` in the declarations: [all, required]. */
function declaredKeys(name) {
  const body = dts('nodejs').match(new RegExp(`export interface ${name}(?: extends \\w+)? \\{([\\s\\S]*?)\\n\\}`))[1]
    .replace(/\/\*[\s\S]*?\*\//g, '');
  const keys = [...body.matchAll(/^\s+(\w+)(\??):/gm)];
  return [keys.map((k) => k[1]).sort(), keys.filter((k) => !k[2]).map((k) => k[1]).sort()];
}

/** The interface declaring each SSE variant (SseEvent is their union). */
const SSE_INTERFACE = {
  start: 'SseStartEvent', chunk: 'SseChunkEvent', reasoning: 'SseReasoningEvent', end: 'SseEndEvent',
  error: 'SseErrorEvent', 'tool-call': 'SseToolCallEvent', 'tool-result': 'SseToolResultEvent',
};

/** [all, required] keys of an interface, its `extends` base included. */
function declaredKeysWithBase(name) {
  const [all, required] = declaredKeys(name);
  const base = dts('nodejs').match(new RegExp(`export interface ${name} extends (\\w+)`))?.[1];
  if (!base) return [all, required];
  const [bAll, bRequired] = declaredKeys(base);
  return [[...all, ...bAll], [...required, ...bRequired]];
}

function assertShape(name, value) {
  const [all, required] = declaredKeysWithBase(name);
  for (const key of Object.keys(value)) assert.ok(all.includes(key), `${name} has undeclared key ${key}`);
  for (const key of required) assert.ok(key in value, `${name} lacks required key ${key}`);
}

test('declared shapes match what the package returns and emits', async () => {
  const require = createRequire(import.meta.url);
  const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');
  const world = await AgentWorld.create({ name: `Shapes ${process.pid}`, description: 'd' });
  world.registerProvider({ async *stream() { yield { reasoning: 'r' }; yield 'answer'; } });
  const agent = await world.addAgent({ name: 'Shape', provider: 'custom', model: 'm',
    systemPrompt: 'p', temperature: 0.5, maxTokens: 10, historyLimit: 4 });
  const sse = [];
  world.on('sse', (e) => sse.push(e));
  const sent = await world.send('hello');
  await world.idle();
  assertShape('Agent', world.agents()[0]);
  assertShape('Agent', agent);
  assertShape('WorldInfo', world.info());
  assertShape('Chat', world.currentChat());
  assertShape('Message', sent);
  for (const m of await world.messages(sent.chatId)) assertShape('Message', m);
  for (const e of world.agentMemory('shape')) assertShape('MemoryEntry', e);
  for (const e of sse) assertShape(SSE_INTERFACE[e.type], e);
  assert.deepEqual(sse.map((e) => e.type), ['start', 'reasoning', 'chunk', 'end']);
});

test('declared tool shapes match what the package returns and emits', async () => {
  const require = createRequire(import.meta.url);
  const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');
  const world = await AgentWorld.create({ name: `Tool shapes ${process.pid}` });
  world.registerProvider({
    async *stream(request) {
      if (request.messages.at(-1).role === 'tool') { yield 'done'; return; }
      yield { toolCalls: [{ id: 'a', name: 'ok', args: {} }, { id: 'b', name: 'fails', args: {} }] };
    },
  });
  world.registerTool({ name: 'ok', description: 'd', parameters: { type: 'object' }, execute: () => ({ fine: true }) });
  world.registerTool({ name: 'fails', description: 'd', parameters: { type: 'object' }, execute: () => { throw new Error('no'); } });
  const agent = await world.addAgent({ name: 'Tooled', provider: 'custom', model: 'm', tools: ['ok', 'fails'],
    maxSteps: 4, reasoning: { effort: 'low', budgetTokens: 100 } });
  const sse = [];
  const system = [];
  world.on('sse', (e) => sse.push(e));
  world.on('system', (e) => system.push(e));
  await world.send('go');
  await world.idle();
  assertShape('Agent', agent);
  assertShape('Reasoning', agent.reasoning);
  for (const t of world.tools()) assertShape('ToolInfo', t);
  assert.deepEqual(sse.map((e) => e.type), ['start', 'tool-call', 'tool-call', 'tool-result', 'tool-result', 'chunk', 'end']);
  for (const e of sse) assertShape(SSE_INTERFACE[e.type], e);
  const [reply] = (await world.messages(world.currentChat().id)).filter((m) => m.sender === 'tooled');
  assertShape('Message', reply);
  for (const c of reply.toolCalls) assertShape('ToolCallRecord', c);
  for (const e of world.agentMemory('tooled')) {
    assertShape('MemoryEntry', e);
    for (const c of e.toolCalls ?? []) assertShape('ToolCallRef', c);
  }
  const steps = system.filter((e) => e.type === 'step-finish');
  assert.equal(steps.length, 2);
  const stepKeys = dts('nodejs').match(/type: "step-finish";([\s\S]*?)\}/)[1].replace(/\/\*[\s\S]*?\*\//g, '');
  const declared = [...stepKeys.matchAll(/^\s+(\w+)\??:/gm)].map((k) => k[1]);
  for (const e of steps) {
    for (const key of Object.keys(e)) assert.ok(key === 'type' || declared.includes(key), `step-finish has undeclared key ${key}`);
  }
});

// Every ```js snippet of the README compiles under tsc --strict against the declarations
// (issue 15): the quick start's `if (e.type === "chunk") out.append(e.content)` included.
// Snippets that continue a previous one get `world` (and the README's placeholders) declared.
test('every README js snippet compiles under tsc --strict', async () => {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  const snippets = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(snippets.length >= 5, `found ${snippets.length} snippets`);
  const dir = new URL('target/readme-ts/', root);
  mkdirSync(dir, { recursive: true });
  const glue = new URL('pkg/web/agent_world_wasm.js', root).pathname;
  const files = snippets.map((code, i) => {
    const imports = /from "agent-world-wasm"/.test(code);
    const prelude = imports ? '' : `import { AgentWorld, type CustomProviderMessage } from ${JSON.stringify(glue)};
declare const world: AgentWorld;
declare const myModel: { generate(m: CustomProviderMessage[], o: { signal: AbortSignal }): Promise<AsyncIterable<string>> };
`;
    const file = new URL(`snippet-${i + 1}.ts`, dir);
    writeFileSync(file, `${prelude}${code.replaceAll('"agent-world-wasm"', JSON.stringify(glue))}\nexport {};\n`);
    return file.pathname;
  });
  await promisify(execFile)(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'es2022',
    '--moduleResolution', 'bundler', '--lib', 'es2022,dom', '--types', 'node', '--skipLibCheck', 'false', ...files],
  { timeout: 120_000 }).catch((e) => assert.fail(`${e.stdout}${e.stderr}`));
});
