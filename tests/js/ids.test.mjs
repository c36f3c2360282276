// The id rule (spec §1) through the package: the .wasm carries no Unicode normalisation or
// case tables, so world and agent ids come from the host's `normalize('NFC')` and
// `toLowerCase()`, injected when a world is created. These names need both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');

test('world and agent ids are NFC and lower-cased by the host', async () => {
  // Decomposed é (e + U+0301), the OHM SIGN (NFC: ω after lower-casing) and a final sigma.
  const world = await AgentWorld.create({ name: `Cafe\u0301 \u2126 ΟΔΥΣΣΕΥΣ ${process.pid}` });
  assert.equal(world.id, `caf\u00e9-\u03c9-οδυσσευς-${process.pid}`);
  // İ lower-cases to i + U+0307 (NFC keeps it apart); A + U+030A composes into å.
  await world.addAgent({ name: 'İstanbul A\u030Asa', provider: 'openai', model: 'm' });
  await world.addAgent({ name: 'ÉCOLE', provider: 'openai', model: 'm' });
  assert.deepEqual(world.agents().map((a) => a.id), ['i\u0307stanbul-\u00e5sa', 'école']);
  await AgentWorld.delete(world.id);
});

test('a mention in another normal form and case reaches that agent only', async () => {
  const world = await AgentWorld.create({ name: `Mentions ${process.pid}` });
  world.registerProvider({ async *stream() { yield 'ok'; } });
  await world.addAgent({ name: 'Zoë', provider: 'custom', model: 'm' });
  await world.addAgent({ name: 'Bob', provider: 'custom', model: 'm' });
  const replies = [];
  world.on('message', (m) => ['zoë', 'bob'].includes(m.sender) && replies.push(m.sender));
  // Decomposed ë (e + U+0308) and an upper-case Z: agent `zoë` once normalised.
  await world.send('@ZOE\u0308 hello');
  await world.idle();
  assert.deepEqual(replies, ['zoë']);
  await AgentWorld.delete(world.id);
});
