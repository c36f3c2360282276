// Replies leave nothing behind: with session mode off, memory stays flat however many replies
// are made. A call races its total and stall timeouts; each timer's promise must settle when
// the call ends first, or the future waiting on it keeps its callbacks alive for ever (this
// leaked four closures per reply: ~25 MiB over 1,500 messages to 10 agents). Memory, not time:
// the margin between the two behaviours is tenfold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../../pkg/nodejs/agent_world_wasm.js', import.meta.url));
const script = `
const { AgentWorld } = require(${JSON.stringify(entry)});
(async () => {
  const world = await AgentWorld.create({ name: 'Leak ' + process.pid, storage: 'memory' });
  await world.setSessionMode(false);
  world.registerProvider({ async *stream() { yield 'ok'; } });
  for (let i = 0; i < 10; i++) await world.addAgent({ name: 'A' + i, provider: 'custom', model: 'm' });
  const live = async () => {
    for (let i = 0; i < 5; i++) { global.gc(); await new Promise((r) => setTimeout(r, 20)); }
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  let n = 0;
  const run = async (k) => { for (let i = 0; i < k; i++) { await world.send('hi ' + n++); await world.idle(); } };
  await run(300);
  const before = await live();
  await run(1500);
  console.log(JSON.stringify({ grew: (await live()) - before }));
})();`;

test('1,500 messages answered by 10 agents leave memory flat (session off)', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 240_000 });
  assert.equal(r.status, 0, r.stderr);
  const { grew } = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.ok(grew < 2.5 * 1024 * 1024, `live memory grew by ${(grew / 1048576).toFixed(1)} MiB over 15,000 replies`);
});
