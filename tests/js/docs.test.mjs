// The API documentation a user reads in their editor: the published declarations (pkg/npm,
// made by scripts/package.sh). Every method of AgentWorld and every exported function of the
// package has a doc comment with an `@example`; every example is valid JavaScript; and the
// StoreAdapter example, the one a user copies to write their own store, really works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('../../', import.meta.url);
const dts = readFileSync(new URL('pkg/npm/web/agent_world_wasm.d.ts', root), 'utf8');
const pkg = createRequire(import.meta.url)(new URL('pkg/npm/node/index.cjs', root).pathname);
const AsyncFunction = (async () => {}).constructor;

// wasm-bindgen's own members: not this package's API.
const GENERATED = new Set(['free', '[Symbol.dispose]', 'initSync', 'init']);

/** Each declaration of a class member or exported function, with the doc block right above it. */
function declarations(text) {
  const lines = text.split('\n');
  const found = [];
  let owner = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const cls = line.match(/^export (?:class|interface) (\w+)/);
    if (cls) { owner = cls[1]; continue; }
    if (line === '}') { owner = null; continue; }
    const member = owner && line.match(/^ {2,4}(?:static )?(\[Symbol\.\w+\]|\w+)(?:<[^>]*>)?\(/);
    const fn = !owner && line.match(/^export (?:default )?function (\w+)/);
    const name = member?.[1] ?? fn?.[1];
    if (!name) continue;
    let doc = '';
    if (lines[i - 1]?.trim() === '*/') {
      let j = i - 1;
      while (j > 0 && !lines[j].includes('/**')) j--;
      doc = lines.slice(j, i).join('\n');
    }
    found.push({ owner, name, doc });
  }
  return found;
}

/** The ```js blocks of every @example in `text`, with the leading ` * ` of comments removed. */
function examples(text) {
  const blocks = [];
  for (const m of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const body = m[0].split('\n').map((l) => l.replace(/^\s*\*( |$)/, '')).join('\n');
    const at = body.indexOf('@example');
    if (at < 0) continue;
    for (const b of body.slice(at).matchAll(/```js\n([\s\S]*?)```/g)) blocks.push(b[1]);
  }
  return blocks;
}

test('every AgentWorld method and exported function has an @example', () => {
  const decls = declarations(dts);
  const api = decls.filter((d) => (d.owner === 'AgentWorld' || d.owner === null) && !GENERATED.has(d.name));
  // The parse is real: methods of every kind are found.
  for (const name of ['create', 'send', 'messages', 'on', 'events', 'version', 'isAgentWorldError']) {
    assert.ok(api.some((d) => d.name === name), `${name} not found among ${api.map((d) => d.name)}`);
  }
  const missing = api.filter((d) => !d.doc.includes('@example')).map((d) => `${d.owner ?? 'export'}.${d.name}`);
  assert.deepEqual([...new Set(missing)], []);
});

test('the docs ship once, in the declarations: the JS glue carries no copy of them', () => {
  // wasm-bindgen writes every doc comment into the glue as well; build_pkg removes that copy
  // (scripts/glue-step.mjs), which every page would otherwise download (6 KB gzip).
  for (const glue of ['pkg/npm/web/agent_world_wasm.js', 'pkg/npm/node/agent_world_wasm.cjs']) {
    const text = readFileSync(new URL(glue, root), 'utf8');
    assert.ok(text.includes('class AgentWorld'), `${glue} is the glue`);
    assert.doesNotMatch(text, /^\s*\/\*\*/m, `${glue} still holds JSDoc blocks`);
  }
  assert.ok(dts.includes('Adds an agent. Its id is the kebab-case of its name.'));
});

test('the glue carries no line comments (wasm-bindgen notes each closure type in one) and no indentation', () => {
  // build_pkg removes them (scripts/glue-step.mjs): 0.38 and 0.35 KB gzip of the web
  // glue; scripts/package.mjs does the same to the guard and the snippets it adds to the npm
  // entries (1.15 KB gzip of the web entry).
  for (const glue of ['pkg/web/agent_world_wasm.js', 'pkg/nodejs/agent_world_wasm.js',
    'pkg/npm/web/agent_world_wasm.js', 'pkg/npm/node/agent_world_wasm.cjs']) {
    const text = readFileSync(new URL(glue, root), 'utf8');
    assert.ok(text.includes('class AgentWorld'), `${glue} is the glue`);
    assert.doesNotMatch(text, /^[ \t]*\/\//m, `${glue} still holds line comments`);
    assert.doesNotMatch(text, /^[ \t]/m, `${glue} still holds indentation`);
  }
});

test('every @example is valid JavaScript', () => {
  const blocks = examples(dts);
  assert.ok(blocks.length >= 30, `found only ${blocks.length} examples`);
  for (const code of blocks) {
    // Examples are module code: imports are hoisted out, the rest may await.
    const body = code.split('\n').filter((l) => !/^import\s/.test(l)).join('\n');
    assert.doesNotThrow(() => new AsyncFunction(body), SyntaxError, code);
  }
  // The check itself: a broken example is caught.
  assert.throws(() => new AsyncFunction('await world.send("x";'), SyntaxError);
});

test('the StoreAdapter example keeps a world that a second open finds', async () => {
  const doc = dts.slice(0, dts.indexOf('export interface StoreAdapter {'));
  const code = examples(doc.slice(doc.lastIndexOf('/**'))).at(0);
  assert.ok(code?.includes('storage: adapter'), 'the StoreAdapter example changed shape');
  const { world, adapter } = await new AsyncFunction('AgentWorld', `${code}\nreturn { world, adapter };`)(pkg.AgentWorld);
  await world.addAgent({ name: 'Alice', provider: 'openai', model: 'gpt-4o-mini' });
  await world.renameChat(world.currentChat().id, 'Kept');

  const again = await pkg.AgentWorld.open(world.id, { storage: adapter });
  assert.deepEqual(again.agents().map((a) => a.id), ['alice']);
  assert.equal(again.currentChat().name, 'Kept');
  const listed = await pkg.AgentWorld.list({ storage: adapter });
  assert.deepEqual(listed.map((w) => w.id), [world.id]);
});
