// Every export fed wrong types and garbage: each call either works or rejects/throws an
// AgentWorldError — never a TypeError from the glue, never a wasm trap — and the module keeps
// working afterwards. Methods are enumerated from the prototype, so new ones are covered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../../pkg/nodejs/agent_world_wasm.js');
const { AgentWorld, isAgentWorldError } = pkg;

const garbage = [undefined, null, 0, -1, NaN, Infinity, '', 'x', '\u0000', {}, [], [1, 2],
  () => 1, true, 10n, Symbol('s'), { name: 42 }, { name: 'n', turnLimit: 'x' }, new Date(0),
  new Uint8Array(3), Object.create(null), { signal: 'nope' }];

async function outcome(call) {
  try {
    await call();
    return 'ok';
  } catch (e) {
    return isAgentWorldError(e) ? `AgentWorldError ${e.code}` : `NOT AgentWorldError: ${e?.constructor?.name}: ${e?.message}`;
  }
}

test('every method answers garbage with AgentWorldError, never a trap', async () => {
  const world = await AgentWorld.create({ name: `Garbage ${process.pid}`, storage: 'memory' });
  const skip = new Set(['constructor', 'free', '__destroy_into_raw', 'stop']);
  const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(world))
    .filter((m) => !skip.has(m) && typeof world[m] === 'function');
  assert.ok(methods.length >= 20, `only ${methods.length} methods found`);
  const bad = [];
  for (const m of methods) {
    for (const a of garbage) {
      for (const b of [undefined, ...garbage.slice(0, 12)]) {
        const got = await outcome(() => world[m](a, b));
        if (got.startsWith('NOT')) bad.push(`world.${m}(${String(typeof a)}, ${String(typeof b)}): ${got}`);
      }
    }
  }
  for (const m of ['create', 'open', 'list', 'delete', 'import']) {
    for (const a of garbage) {
      for (const b of [undefined, ...garbage.slice(0, 12)]) {
        const got = await outcome(() => AgentWorld[m](a, b));
        if (got.startsWith('NOT')) bad.push(`AgentWorld.${m}(${typeof a}, ${typeof b}): ${got}`);
      }
    }
  }
  for (const f of ['version', 'isAgentWorldError', 'requestPersistentStorage', 'storageEstimate']) {
    for (const a of garbage) {
      const got = await outcome(() => pkg[f](a));
      if (got.startsWith('NOT')) bad.push(`${f}(${typeof a}): ${got}`);
    }
  }
  assert.deepEqual(bad.slice(0, 20), []);

  // The module is intact: a fresh world still works end to end.
  const after = await AgentWorld.create({ name: `After Garbage ${process.pid}` });
  after.registerProvider({ async *stream() { yield 'still fine'; } });
  await after.addAgent({ name: 'Check', provider: 'custom', model: 'm' });
  const replies = [];
  after.on('message', (m) => m.sender === 'check' && replies.push(m.content));
  await after.send('are you ok?');
  await after.idle();
  assert.deepEqual(replies, ['still fine']);
});
