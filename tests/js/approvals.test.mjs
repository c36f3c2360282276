// The approvals API of the built package (pkg/nodejs): argument checks, and (below) the whole
// flow with a tool registered from JS: ask, approve, deny, by-args, cancel, reopen and resume.
// The engine's approval rules are
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

// ---- With a tool registered from JS (registerTool), the whole flow over a custom provider.

const WEATHER = {
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** Calls `calls` on the first step of a reply, then answers with the tool results it is given. */
function toolProvider(calls) {
  return {
    async *stream(request) {
      const last = request.messages.at(-1);
      if (last.role !== 'tool') {
        yield 'Let me check.';
        yield { toolCalls: calls };
        return;
      }
      const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      yield `Results: ${results.join(' | ')}`;
    },
  };
}

async function toolWorld(label, needsApproval, calls = [{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]) {
  const world = await AgentWorld.create({ name: uniqueName(label) });
  world.registerProvider(toolProvider(calls));
  const executed = [];
  world.registerTool({ ...WEATHER, needsApproval, execute: async (args) => { executed.push(args); return { tempC: 21 }; } });
  await world.addAgent({ name: 'Helper', provider: 'custom', model: 'm', tools: ['get_weather'] });
  const events = [];
  for (const topic of ['system', 'message']) world.on(topic, (e) => events.push([topic, e]));
  return { world, executed, events };
}

const ofType = (events, type) => events.filter(([t, e]) => t === 'system' && e.type === type).map(([, e]) => e);
const published = (events) => events.filter(([t]) => t === 'message').map(([, m]) => m);

test('needsApproval: the call waits (idle meanwhile), approve runs it and the reply resumes', async () => {
  const { world, executed, events } = await toolWorld('Approve', true);
  await world.send('Weather in Paris?');
  await world.idle(); // a reply waiting for approval is not work in progress
  assert.deepEqual(executed, [], 'not run before the answer');
  const [request] = ofType(events, 'approval-request');
  assert.ok(request, 'approval-request emitted');
  assert.equal(request.toolName, 'get_weather');
  assert.deepEqual(request.args, { city: 'Paris' });
  const pending = world.pendingApprovals();
  assert.equal(pending.length, 1);
  assert.equal(pending[0].approvalId, request.approvalId);
  assert.equal(pending[0].chatId, world.currentChat().id);
  assert.equal(published(events).filter((m) => m.sender === 'helper').length, 0, 'no reply yet');

  await world.approve(request.approvalId);
  await world.idle();
  assert.deepEqual(executed, [{ city: 'Paris' }]);
  assert.deepEqual(ofType(events, 'approval-resolved').map((e) => [e.approvalId, e.outcome]), [[request.approvalId, 'approved']]);
  const reply = published(events).find((m) => m.sender === 'helper');
  assert.ok(reply, 'the reply was published after the approval');
  assert.match(reply.content, /tempC/);
  assert.deepEqual(reply.toolCalls.map((c) => [c.toolName, c.result]), [['get_weather', { tempC: 21 }]]);
  assert.deepEqual(world.pendingApprovals(), []);
  assert.equal(world.agents()[0].llmCallCount, 1, 'one turn however many steps and waits');
  await assert.rejects(world.approve(request.approvalId), { code: 'approval_not_found' });
});

test('deny: the tool never runs and the model is told why', async () => {
  const { world, executed, events } = await toolWorld('Deny', true);
  await world.send('Weather in Paris?');
  await world.idle();
  const [request] = ofType(events, 'approval-request');
  await world.deny(request.approvalId, 'not today');
  await world.idle();
  assert.deepEqual(executed, []);
  assert.deepEqual(ofType(events, 'approval-resolved').map((e) => e.outcome), ['denied']);
  const reply = published(events).find((m) => m.sender === 'helper');
  assert.match(reply.content, /denied by the user: not today/);
  assert.equal(reply.toolCalls[0].error, 'denied by the user: not today');
});

test('needsApproval as a function of the args asks only when it says so', async () => {
  const calls = [
    { id: 'a', name: 'get_weather', args: { city: 'Oslo' } },
    { id: 'b', name: 'get_weather', args: { city: 'Paris' } },
  ];
  const { world, executed, events } = await toolWorld('By args', ({ city }) => city === 'Paris', calls);
  await world.send('Weather?');
  await world.idle();
  assert.deepEqual(executed, [{ city: 'Oslo' }], 'Oslo ran without asking; Paris waits');
  const requests = ofType(events, 'approval-request');
  assert.deepEqual(requests.map((r) => r.args.city), ['Paris']);
  await world.approve(requests[0].approvalId);
  await world.idle();
  assert.deepEqual(executed, [{ city: 'Oslo' }, { city: 'Paris' }]);
});

test('stop() cancels a pending approval and keeps what the agent had written', async () => {
  const { world, executed, events } = await toolWorld('Cancel', true);
  await world.send('Weather in Paris?');
  await world.idle();
  const [request] = ofType(events, 'approval-request');
  world.stop();
  await world.idle();
  assert.deepEqual(ofType(events, 'approval-resolved').map((e) => [e.approvalId, e.outcome]), [[request.approvalId, 'cancelled']]);
  assert.deepEqual(world.pendingApprovals(), []);
  assert.deepEqual(executed, []);
  const interrupted = published(events).find((m) => m.kind === 'interrupted');
  assert.ok(interrupted, 'the partial reply is kept as interrupted');
  assert.match(interrupted.content, /Let me check/);
  await assert.rejects(world.approve(request.approvalId), { code: 'approval_not_found' });
  // The world goes on.
  await world.send('Still there?');
  await world.idle();
});

test('a pending approval survives a reopen: another handle registers the tool again and resumes it', async () => {
  const { world } = await toolWorld('Reopen', true);
  await world.send('Weather in Paris?');
  await world.idle();
  const [pending] = world.pendingApprovals();
  assert.ok(pending);
  // Reopen the same stored world (as a reload would) and answer there.
  const again = await AgentWorld.open(world.id);
  assert.deepEqual(again.pendingApprovals().map((p) => p.approvalId), [pending.approvalId]);
  again.registerProvider(toolProvider([]));
  const executed = [];
  again.registerTool({ ...WEATHER, needsApproval: true, execute: async (args) => { executed.push(args); return { tempC: 5 }; } });
  const messages = [];
  again.on('message', (m) => messages.push(m));
  await again.approve(pending.approvalId);
  await again.idle();
  assert.deepEqual(executed, [{ city: 'Paris' }]);
  const reply = messages.find((m) => m.sender === 'helper');
  assert.ok(reply, 'the resumed reply is published by the reopened world');
  assert.match(reply.content, /tempC/);
  const stored = await again.messages(again.currentChat().id);
  assert.ok(stored.some((m) => m.messageId === reply.messageId && m.toolCalls?.length === 1), 'persisted with its toolCalls');
});
