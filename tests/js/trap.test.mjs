// After a trap (a wasm RuntimeError: no Rust code is left running and the memory is in an
// unknown state) every call fails at once with AgentWorldError `internal_error`, the calls
// pending at that moment reject with it, and nothing hangs. The npm package's JS guard layer
// (src/bindings/guard.js) does this. A trap cannot be provoked through the API (the input
// reader refuses what used to cause one), so this test forges a world's pointer: the next call
// reads outside the wasm memory. Its own file: node --test runs each file in its own process,
// and the trap ends this module instance for good.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const entry = fileURLToPath(new URL('../../pkg/npm/node/index.cjs', import.meta.url));
if (!existsSync(entry)) throw new Error('pkg/npm is missing: run bash scripts/package.sh first');
const { AgentWorld, isAgentWorldError, version } = require(entry);

const MESSAGE = 'the engine stopped after an internal error; reload the page';

test('after a trap every call fails at once with internal_error, pending calls included', async () => {
  const world = await AgentWorld.create({ name: `Trap ${process.pid}`, storage: 'memory' });
  // The call's timeout timers outlive the trap and fire into the dead module a few seconds
  // later: they must stay quiet (an uncaught error there would fail this test's file).
  world.setTimeouts(3000, 2000);
  let streaming;
  const started = new Promise((resolve) => { streaming = resolve; });
  world.registerProvider({
    async *stream() { yield 'partial'; streaming(); await new Promise(() => {}); },
  });
  await world.addAgent({ name: 'Slow', provider: 'custom', model: 'm' });
  await world.send('@slow go on');
  const pending = world.idle();
  await started;

  const victim = await AgentWorld.create({ name: `Victim ${process.pid}`, storage: 'memory' });
  victim.__wbg_ptr = 0xfffffff0; // far outside the wasm memory
  let trap;
  try {
    victim.info();
  } catch (e) {
    trap = e;
  }
  assert.ok(isAgentWorldError(trap), `not an AgentWorldError: ${trap?.stack ?? trap}`);
  assert.equal(trap.code, 'internal_error');
  assert.equal(trap.message, MESSAGE);
  assert.ok(trap.cause instanceof WebAssembly.RuntimeError, `cause: ${trap.cause}`);

  const settled = await Promise.race([
    pending.then(() => 'resolved', (e) => e),
    new Promise((resolve) => setTimeout(() => resolve('still pending after 5 s'), 5000)),
  ]);
  assert.equal(settled?.code, 'internal_error', `the pending idle(): ${settled}`);

  const codes = [];
  for (const call of [() => version(), () => world.info(), () => world.agents(),
    () => world.configureProvider('openai', { apiKey: 'k' })]) {
    try {
      call();
      codes.push('returned');
    } catch (e) {
      codes.push(isAgentWorldError(e) ? e.code : String(e));
    }
  }
  assert.deepEqual(codes, ['internal_error', 'internal_error', 'internal_error', 'internal_error']);
  for (const call of [() => world.send('hello?'), () => AgentWorld.create({ name: 'After' }),
    () => world.messages('x'), () => AgentWorld.list()]) {
    const p = call();
    assert.ok(p instanceof Promise, 'async calls reject, they do not throw');
    await assert.rejects(p, (e) => e.code === 'internal_error' && e.message === MESSAGE);
  }
  world.free(); // still fine
  victim.free();
  assert.equal(isAgentWorldError(trap), true, 'isAgentWorldError still works');
  assert.equal(isAgentWorldError(new Error('x')), false);
});
