// The JS API fuzz test: every export, and every field of every options object, fed hostile
// values (wrong types; NaN, ±Infinity, BigInt, symbols, functions; throwing and revoked
// Proxies, throwing getters; cyclic and 10,000-deep objects; 10 MB strings, lone surrogates,
// characters no HTTP header may hold). Each call either works or throws/rejects an
// AgentWorldError (never a TypeError from the glue, never `internal_error`, never a hang), and
// after each group of probes a health check runs: a fresh world gets a reply and an old world
// still answers. Methods are enumerated from the prototype, so new ones are covered. The order
// of the field probes and the pairs of fields come from a seeded generator (AWW_FUZZ_SEED, 12 by
// default): a failure names the seed that reproduces it. Runs the npm package's Node entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const entry = fileURLToPath(new URL('../../pkg/npm/node/index.cjs', import.meta.url));
if (!existsSync(entry)) throw new Error('pkg/npm is missing: run bash scripts/package.sh first');
const pkg = require(entry);
const { AgentWorld, isAgentWorldError } = pkg;

const SEED = Number(process.env.AWW_FUZZ_SEED ?? 12);
/** mulberry32: a small deterministic generator. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = generator(SEED);
const shuffle = (list) => {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};

const boom = new Error('boom');
const throwingProxy = new Proxy({}, {
  get() { throw boom; }, has() { throw boom; }, ownKeys() { throw boom; },
  getPrototypeOf() { throw boom; }, getOwnPropertyDescriptor() { throw boom; },
});
const revoked = (() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })();
const revokedFunction = (() => { const r = Proxy.revocable(() => {}, {}); r.revoke(); return r.proxy; })();
const throwingGetter = Object.defineProperty({}, 'name', { get() { throw boom; }, enumerable: true });
const cyclic = (() => { const o = { name: 'x' }; o.self = o; return o; })();
const cyclicArray = (() => { const a = [1]; a.push(a); return a; })();
const deep = (() => { let o = {}; for (let i = 0; i < 10_000; i++) o = { d: o }; return o; })();
const deepArray = (() => { let a = []; for (let i = 0; i < 10_000; i++) a = [a]; return a; })();
const huge = 'x'.repeat(10 * 1024 * 1024);

/** Wrong types and plain garbage: cheap, used in every argument position. */
const garbage = [undefined, null, 0, -1, NaN, Infinity, '', 'x', '\u0000', {}, [], [1, 2],
  () => 1, true, 10n, Symbol('s'), { name: 42 }, { name: 'n', turnLimit: 'x' }, new Date(0),
  new Uint8Array(3), Object.create(null), { signal: 'nope' }];
/** The hostile values of issue 12, used in every argument position and every options field. */
const hostile = {
  undefined, null: null, NaN, Infinity, '-Infinity': -Infinity, '-0': -0, 1e308: 1e308,
  BigInt: 10n, symbol: Symbol('s'), function: () => 1, 'throwing Proxy': throwingProxy,
  'revoked Proxy': revoked, 'revoked function Proxy': revokedFunction,
  'throwing getter': throwingGetter, cyclic, 'cyclic array': cyclicArray,
  '10,000-deep object': deep, '10,000-deep array': deepArray, 'lone surrogates': '\uD800x\uDFFF',
  'header chars': 'k\u200Be\u2019y\u0100 \r\n:', 'empty string': '', object: {}, array: [],
  '10 MB string': huge,
};

const describe = (v) => {
  for (const [name, h] of Object.entries(hostile)) if (Object.is(h, v)) return name;
  try { return typeof v === 'string' ? JSON.stringify(v.slice(0, 20)) : String(v); } catch { return typeof v; }
};

/** 'ok', or what went wrong; a call may run at most 10 s. */
async function outcome(call) {
  let timer;
  try {
    const hung = new Promise((resolve) => { timer = setTimeout(() => resolve('hung'), 10_000); });
    const r = await Promise.race([(async () => { await call(); return 'ok'; })(), hung]);
    return r === 'hung' ? 'HUNG for 10 s' : 'ok';
  } catch (e) {
    if (!isAgentWorldError(e)) return `NOT AgentWorldError: ${e?.constructor?.name}: ${e?.message}`;
    return e.code === 'internal_error' || e.code === 'world_closed' ? `${e.code}: ${e.message}` : 'ok';
  } finally {
    clearTimeout(timer);
  }
}

let n = 0;
const unique = (base) => `${base} ${process.pid} ${++n}`;

/** A world whose custom provider answers `text`, with the agent `probe`. */
async function answering(text) {
  const world = await AgentWorld.create({ name: unique('Healthy'), storage: 'memory' });
  world.registerProvider({ async *stream() { yield text; } });
  await world.addAgent({ name: 'Probe', provider: 'custom', model: 'm' });
  return world;
}

async function reply(world) {
  const replies = [];
  const off = world.on('message', (m) => m.sender === 'probe' && replies.push(m.content));
  await world.send('@probe still there?');
  await world.idle();
  off();
  return replies;
}

let old;
/** The health check: a fresh world gets a reply, and the old world still answers. */
async function healthy(after) {
  old ??= await answering('old');
  const fresh = await answering('fresh');
  assert.deepEqual(await reply(fresh), ['fresh'], `a fresh world failed after ${after}`);
  assert.deepEqual(await reply(old), ['old'], `the old world failed after ${after}`);
  fresh.free();
}

test('every method answers garbage in every argument with AgentWorldError, never a trap', async () => {
  const values = [...garbage, ...Object.values(hostile)];
  const target = await AgentWorld.create({ name: unique('Garbage'), storage: 'memory' });
  const skip = new Set(['constructor', 'free', '__destroy_into_raw', '__close', 'stop']);
  const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(target))
    .filter((m) => !skip.has(m) && typeof target[m] === 'function');
  assert.ok(methods.length >= 20, `only ${methods.length} methods found`);
  const bad = [];
  const probe = async (label, call) => {
    const got = await outcome(call);
    if (got.startsWith('HUNG')) assert.fail(`${label}: ${got} (seed ${SEED})`);
    if (got !== 'ok') bad.push(`${label}: ${got}`);
  };
  for (const m of methods) {
    for (const a of values) {
      for (const b of [undefined, ...garbage.slice(0, 12)]) {
        await probe(`world.${m}(${describe(a)}, ${describe(b)})`, () => target[m](a, b));
      }
      await probe(`world.${m}('x', ${describe(a)})`, () => target[m]('x', a));
    }
    await healthy(`world.${m}`);
  }
  for (const m of ['create', 'open', 'list', 'delete', 'import']) {
    for (const a of values) {
      for (const b of [undefined, ...garbage.slice(0, 12)]) {
        await probe(`AgentWorld.${m}(${describe(a)}, ${describe(b)})`, () => AgentWorld[m](a, b));
      }
      await probe(`AgentWorld.${m}('x', ${describe(a)})`, () => AgentWorld[m]('x', a));
    }
    await healthy(`AgentWorld.${m}`);
  }
  for (const f of ['version', 'isAgentWorldError', 'requestPersistentStorage', 'storageEstimate']) {
    for (const a of values) await probe(`${f}(${describe(a)})`, () => pkg[f](a));
  }
  assert.deepEqual(bad.slice(0, 20), [], `seed ${SEED}`);
  await healthy('every argument probe');
});

test('every options field answers hostile values with AgentWorldError (seeded order and pairs)', async () => {
  const target = await answering('target');
  const adapter = () => {
    const map = new Map();
    return {
      async get(k) { return map.get(k); },
      async put(k, v) { map.set(k, v); },
      async delete(k) { map.delete(k); },
      async list(p) { return [...map].filter(([k]) => k.startsWith(p)).sort(); },
      async batch(ops) { for (const o of ops) o.type === 'put' ? map.set(o.key, o.value) : map.delete(o.key); },
    };
  };
  const signal = new AbortController().signal;
  // A unique name where the probe left a plain object with a string name (a hostile whole
  // argument is passed as it is).
  const renamed = (o) => {
    try {
      return Object.getPrototypeOf(o) === Object.prototype && typeof o.name === 'string'
        && o.name.length < 9 ? { ...o, name: unique(o.name) } : o;
    } catch {
      return o; // a throwing Proxy or getter: the package must handle it, not this helper
    }
  };
  // Each call with a valid base object; a probe replaces one field (or, seeded, two).
  const calls = [
    ['AgentWorld.create', { name: 'N', description: 'd', turnLimit: 3, historyLimit: 5,
      chatLLMProvider: 'custom', chatLLMModel: 'm', storage: 'memory', debug: false },
    (o) => AgentWorld.create(renamed(o))],
    ['AgentWorld.open', { storage: 'memory', debug: true }, (o) => AgentWorld.open(target.id, o)],
    ['AgentWorld.list', { storage: 'memory', debug: true }, (o) => AgentWorld.list(o)],
    ['AgentWorld.delete', { storage: 'memory' }, (o) => AgentWorld.delete('no-such-world', o)],
    ['AgentWorld.import', { storage: adapter() }, (o) => AgentWorld.import('{}', o)],
    ['addAgent', { name: 'A', type: 't', provider: 'custom', model: 'm', systemPrompt: 's',
      temperature: 0.5, maxTokens: 10, historyLimit: 3, stream: true },
    (o) => target.addAgent(renamed(o))],
    ['updateAgent', { name: 'Probe', type: 't', provider: 'custom', model: 'm', systemPrompt: 's',
      temperature: 0.5, maxTokens: 10, historyLimit: 3, stream: true, status: 'active' },
    (o) => target.updateAgent('probe', o)],
    ['update', { description: 'd', turnLimit: 3, historyLimit: 5, chatLLMProvider: null,
      chatLLMModel: null }, (o) => target.update(o)],
    ['configureProvider', { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', endpoint: 'http://127.0.0.1:9',
      deployment: 'd', apiVersion: 'v', headers: { 'x-a': 'b' } },
    (o) => target.configureProvider('azure', o)],
    ['configureProvider headers', { 'x-a': 'b', 'x-b': 'c' },
      (o) => target.configureProvider('openai', { apiKey: 'k', headers: o })],
    ['send', { sender: 'HUMAN', signal }, (o) => target.send('hello', o)],
    ['messages', { before: undefined, limit: 5 }, (o) => target.messages(target.currentChat().id, o)],
    ['events', { signal }, (o) => target.events(o).return()],
    ['registerProvider', { async *stream() { yield 'x'; } }, (o) => target.registerProvider(o)],
  ];
  const bad = [];
  for (const [name, base, call] of calls) {
    const fields = Object.keys(base);
    const probes = [];
    for (const field of fields) {
      for (const [label, value] of Object.entries(hostile)) probes.push([[field, label, value]]);
    }
    // Seeded pairs: two hostile fields at once.
    for (let i = 0; i < 40; i++) {
      const entries = Object.entries(hostile);
      const pick = () => {
        const [label, value] = entries[Math.floor(random() * entries.length)];
        return [fields[Math.floor(random() * fields.length)], label, value];
      };
      probes.push([pick(), pick()]);
    }
    // The whole options argument hostile.
    for (const [label, value] of Object.entries(hostile)) probes.push([[null, label, value]]);
    for (const probe of shuffle(probes)) {
      let options = { ...base };
      for (const [field, , value] of probe) {
        if (field === null) options = value;
        else options[field] = value;
      }
      const got = await outcome(() => call(options));
      const label = `${name}(${probe.map(([f, l]) => `${f ?? '(whole)'}: ${l}`).join(', ')})`;
      if (got.startsWith('HUNG')) assert.fail(`${label}: ${got} (seed ${SEED})`);
      if (got !== 'ok') {
        bad.push(`${label}: ${got}`);
      }
    }
    // The target's own agent and provider may have been changed: put them back.
    target.registerProvider({ async *stream() { yield 'target'; } });
    await target.updateAgent('probe', { name: 'Probe', provider: 'custom', model: 'm', systemPrompt: null,
      temperature: null, maxTokens: null, historyLimit: null, stream: true, status: 'active' }).catch(() => {});
    await healthy(name);
  }
  assert.deepEqual(bad.slice(0, 20), [], `seed ${SEED}`);
  assert.deepEqual(await reply(target), ['target'], 'the fuzzed world still answers');
});
