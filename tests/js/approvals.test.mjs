// The approvals API of the built package (pkg/nodejs): what can be checked from JavaScript
// before tools can be registered from JS (the JS registerTool is another change). Creating a
// pending approval needs a registered tool with needsApproval; the engine's approval rules are
// tested natively in tests/engine_approvals.rs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld, isAgentWorldError } = require('../../pkg/nodejs/agent_world_wasm.js');

let n = 0;
const uniqueName = (base) => `${base} ${process.pid} ${++n}`;

test('a new world has no pending approvals, and answering an unknown id is approval_not_found', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Approvals') });
  assert.deepEqual(world.pendingApprovals(), []);
  for (const answer of [() => world.approve('nope'), () => world.deny('nope', 'no reason')]) {
    await assert.rejects(answer(), (e) => {
      assert.ok(isAgentWorldError(e));
      assert.equal(e.code, 'approval_not_found');
      assert.match(e.message, /"nope"/);
      return true;
    });
  }
  // With session mode off too (approvals then live in memory).
  await world.setSessionMode(false);
  await assert.rejects(world.approve('nope'), { code: 'approval_not_found' });
  // idle() resolves: nothing is in progress.
  await world.idle();
});

test('approve and deny check their arguments', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Approvals args') });
  await assert.rejects(world.approve(42), (e) => e.code === 'invalid_input' && /approvalId/.test(e.message));
  await assert.rejects(world.deny('x', 7), (e) => e.code === 'invalid_input' && /reason/.test(e.message));
  await assert.rejects(world.deny('x', undefined), { code: 'approval_not_found' });
  await assert.rejects(world.deny('x', null), { code: 'approval_not_found' });
});

test('stop() with nothing pending leaves the world idle and usable', async () => {
  const world = await AgentWorld.create({ name: uniqueName('Approvals stop') });
  world.stop();
  await world.idle();
  assert.deepEqual(world.pendingApprovals(), []);
});
