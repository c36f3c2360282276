// Tools from JavaScript (spec §9): registerTool / unregisterTool / tools() / setInstructions,
// the JS executor (context, timeout, abort, errors the model is given), the custom provider's
// tool calls, and hostile definitions. Over pkg/nodejs with a custom provider: no network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AgentWorld, isAgentWorldError } = require('../../pkg/nodejs/agent_world_wasm.js');
let n = 0;
const name = (base) => `${base} ${process.pid} ${++n}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const WEATHER = {
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A provider that makes `calls` on the first step of each reply, then answers with text
 * built from the tool results it is given. Records every request. */
function toolProvider(calls, requests = []) {
  return {
    requests,
    async *stream(request) {
      requests.push(structuredClone(request));
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

/** Every event of the world, in order, as [topic, event]. */
function record(world) {
  const events = [];
  for (const topic of ['sse', 'system', 'message']) world.on(topic, (e) => events.push([topic, e]));
  return events;
}

function assertInvalid(fn, field) {
  assert.throws(fn, (e) => {
    assert.ok(isAgentWorldError(e), `not an AgentWorldError: ${e}`);
    assert.equal(e.code, 'invalid_input', e.message);
    assert.ok(e.message.includes(field), `${e.message} should name ${field}`);
    return true;
  });
}

test('a reply calls a JS tool, gives the model its result and publishes the calls', async () => {
  const world = await AgentWorld.create({ name: name('Tools') });
  const provider = toolProvider([{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]);
  world.registerProvider(provider);
  const executed = [];
  world.registerTool({
    ...WEATHER,
    execute: async (args, context) => {
      executed.push({ args, context });
      return { city: args.city, tempC: 21 };
    },
  });
  await world.addAgent({ name: 'Helper', provider: 'custom', model: 'm', tools: ['get_weather'] });
  const events = record(world);
  await world.send('Weather in Paris?');
  await world.idle();

  // execute got the checked arguments and its context.
  assert.equal(executed.length, 1);
  const { args, context } = executed[0];
  assert.deepEqual(args, { city: 'Paris' });
  assert.ok(context.signal instanceof AbortSignal);
  assert.equal(context.signal.aborted, false, 'a settled call does not abort its signal');
  assert.equal(context.agentName, 'helper');
  assert.equal(context.toolCallId, 'call-1');
  const start = events.find(([t, e]) => t === 'sse' && e.type === 'start')[1];
  assert.equal(context.messageId, start.messageId);

  // Step 1 offered the tool and said who asks and why; step 2 saw the call and its result.
  const [step1, step2] = provider.requests;
  assert.equal(provider.requests.length, 2);
  assert.deepEqual(step1.tools, [{ name: 'get_weather', description: WEATHER.description,
    parameters: WEATHER.parameters }]);
  assert.equal(step1.agentName, 'helper');
  assert.equal(step1.purpose, 'reply');
  const [assistant, toolEntry] = step2.messages.slice(-2);
  assert.equal(assistant.role, 'assistant');
  assert.deepEqual(assistant.toolCalls, [{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]);
  assert.deepEqual(toolEntry, { role: 'tool', toolCallId: 'call-1', toolName: 'get_weather',
    content: JSON.stringify({ city: 'Paris', tempC: 21 }) });
  assert.match(step2.messages.at(-2).content, /Let me check/);

  // Events in order.
  const order = events.filter(([t, e]) => t === 'sse' || e.type === 'step-finish')
    .map(([t, e]) => `${t}:${e.type}${e.step ? e.step : ''}`);
  assert.deepEqual(order, ['sse:start', 'sse:chunk', 'sse:tool-call', 'sse:tool-result',
    'system:step-finish1', 'sse:chunk', 'system:step-finish2', 'sse:end']);
  const call = events.find(([, e]) => e.type === 'tool-call')[1];
  assert.deepEqual([call.toolCallId, call.toolName, call.args], ['call-1', 'get_weather', { city: 'Paris' }]);
  const result = events.find(([, e]) => e.type === 'tool-result')[1];
  assert.deepEqual(result.result, { city: 'Paris', tempC: 21 });

  // The published reply carries the calls; memory and export keep them; one turn.
  const reply = events.find(([t, e]) => t === 'message' && e.sender === 'helper')[1];
  assert.match(reply.content, /^Let me check\.\n\nResults: \{"city":"Paris","tempC":21\}$/);
  assert.deepEqual(reply.toolCalls, [{ toolCallId: 'call-1', toolName: 'get_weather',
    args: { city: 'Paris' }, result: { city: 'Paris', tempC: 21 } }]);
  const stored = (await world.messages(reply.chatId)).find((m) => m.messageId === reply.messageId);
  assert.deepEqual(stored.toolCalls, reply.toolCalls);
  const memory = world.agentMemory('helper');
  assert.deepEqual(memory.map((e) => e.role), ['user', 'assistant', 'tool', 'assistant']);
  assert.deepEqual(memory[1].toolCalls, [{ toolCallId: 'call-1', toolName: 'get_weather', args: { city: 'Paris' } }]);
  assert.deepEqual([memory[2].toolCallId, memory[2].toolName], ['call-1', 'get_weather']);
  const exported = JSON.parse(await world.export());
  assert.ok(JSON.stringify(exported).includes('"toolCallId":"call-1"'));
  assert.equal(world.agents()[0].llmCallCount, 1, 'one reply is one turn');
});

test('throwing, timing-out and non-JSON tools become error results and the reply goes on', async () => {
  const world = await AgentWorld.create({ name: name('Tool Errors') });
  const provider = toolProvider(['boom', 'reject', 'slow', 'fn', 'cycle', 'big', 'nan', 'undef', 'sym', 'bad_args']
    .map((tool, i) => ({ id: `c${i}`, name: tool, args: tool === 'bad_args' ? { n: 'x' } : {} })));
  world.registerProvider(provider);
  let slowSignal;
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const tools = {
    boom: () => { throw new Error('kaput'); },
    reject: async () => { throw new TypeError('rejected here'); },
    slow: (_a, { signal }) => { slowSignal = signal; return new Promise(() => {}); },
    fn: () => () => 1,
    cycle: () => cyclic,
    big: () => ({ n: 10n }),
    nan: () => [1, NaN],
    undef: () => undefined,
    sym: async () => Symbol('s'),
    bad_args: () => 'never run',
  };
  for (const [tool, execute] of Object.entries(tools)) {
    world.registerTool({
      name: tool, description: tool, execute,
      parameters: tool === 'bad_args'
        ? { type: 'object', properties: { n: { type: 'integer' } } } : { type: 'object' },
      ...(tool === 'slow' ? { timeoutMs: 50 } : {}),
    });
  }
  await world.addAgent({ name: 'Caller', provider: 'custom', model: 'm', tools: Object.keys(tools) });
  const events = record(world);
  await world.send('go');
  await world.idle();
  const errors = Object.fromEntries(events.filter(([, e]) => e.type === 'tool-result')
    .map(([, e]) => [e.toolName, e.error]));
  assert.equal(errors.boom, 'kaput');
  assert.equal(errors.reject, 'rejected here');
  assert.equal(errors.slow, 'timed out after 0.05 s');
  assert.equal(slowSignal.aborted, true, 'the timeout aborts the tool signal');
  assert.match(errors.fn, /not JSON: a function/);
  assert.match(errors.cycle, /not JSON: a cycle/);
  assert.match(errors.big, /not JSON: a BigInt/);
  assert.match(errors.nan, /not JSON: a non-finite number/);
  assert.match(errors.undef, /not JSON: undefined/);
  assert.match(errors.sym, /not JSON: a symbol/);
  assert.match(errors.bad_args, /args\.n: expected integer, got string/);
  // The model got every error as {"error": …} and the reply was published.
  const results = provider.requests[1].messages.filter((m) => m.role === 'tool');
  assert.equal(results.length, 10);
  assert.deepEqual(JSON.parse(results[0].content), { error: 'kaput' });
  const reply = events.find(([t, e]) => t === 'message' && e.sender === 'caller')[1];
  assert.equal(reply.kind, 'message');
  assert.match(reply.content, /Results: \{"error":"kaput"\}/);
  assert.equal(reply.toolCalls.length, 10);
  assert.ok(reply.toolCalls.every((c) => typeof c.error === 'string' && !('result' in c)));
  assert.ok(!events.some(([t, e]) => t === 'system' && e.type === 'error'), 'no system error');
});

test('a non-JSON tool value is named with its key, word for word', async () => {
  const tools = {
    big: () => ({ n: 10n }),
    nested: () => ({ a: [1, { b: Symbol('x') }] }),
    nan: () => [1, NaN],
    hole: () => [1, undefined],
    quoted: () => ({ 'say "hi"\n': Infinity }),
    unnamed: () => ({ '': NaN }),
    via_to_json: () => ({ toJSON() { return () => 1; } }),
    kept: () => ({ a: 1, gone: undefined, at: new Date(0) }),
  };
  const world = await AgentWorld.create({ name: name('Tool Not JSON') });
  world.registerProvider(toolProvider(Object.keys(tools).map((tool, i) => ({ id: `k${i}`, name: tool, args: {} }))));
  for (const [tool, execute] of Object.entries(tools)) {
    world.registerTool({ name: tool, description: tool, parameters: { type: 'object' }, execute });
  }
  await world.addAgent({ name: 'Keys', provider: 'custom', model: 'm', tools: Object.keys(tools) });
  const events = record(world);
  await world.send('go');
  await world.idle();
  const results = Object.fromEntries(events.filter(([, e]) => e.type === 'tool-result')
    .map(([, e]) => [e.toolName, e.error ?? e.result]));
  const not = (what) => `the tool returned a value that is not JSON: ${what}`;
  assert.deepEqual(results, {
    big: not('a BigInt (at key "n")'),
    nested: not('a symbol (at key "b")'),
    nan: not('a non-finite number (NaN or Infinity) (at key "1")'),
    hole: not('undefined (at key "1")'),
    quoted: not('a non-finite number (NaN or Infinity) (at key "say \\"hi\\"\\n")'),
    unnamed: not('a non-finite number (NaN or Infinity)'),
    via_to_json: not('a function'),
    kept: { a: 1, at: '1970-01-01T00:00:00.000Z' },
  });
});

test('stop() aborts the running tool signal and keeps the partial reply as interrupted', async () => {
  const world = await AgentWorld.create({ name: name('Tool Stop') });
  world.registerProvider(toolProvider([{ id: 'w1', name: 'wait', args: {} }]));
  let signal;
  let aborted = false;
  world.registerTool({
    name: 'wait', description: 'waits for its signal', parameters: { type: 'object' },
    execute: (_args, ctx) => {
      signal = ctx.signal;
      return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => {
        aborted = true;
        reject(new Error('aborted by signal'));
      }));
    },
  });
  await world.addAgent({ name: 'Waiter', provider: 'custom', model: 'm', tools: ['wait'] });
  const events = record(world);
  await world.send('go');
  while (!signal) await sleep(5);
  assert.equal(signal.aborted, false);
  world.stop();
  await world.idle();
  assert.equal(aborted, true, 'the tool saw its signal abort');
  const result = events.find(([, e]) => e.type === 'tool-result')[1];
  assert.equal(result.error, 'cancelled');
  const errs = events.filter(([t, e]) => t === 'system' && e.type === 'error').map(([, e]) => e.code);
  assert.deepEqual(errs, ['llm_aborted']);
  const notice = events.find(([t, e]) => t === 'message' && e.sender === 'waiter')[1];
  assert.equal(notice.kind, 'interrupted');
  assert.equal(notice.toolCalls[0].toolName, 'wait');
});

test('an agent listing an unregistered tool fails its reply with tool_not_registered', async () => {
  const world = await AgentWorld.create({ name: name('Missing Tool') });
  const provider = toolProvider([]);
  world.registerProvider(provider);
  world.registerTool({ ...WEATHER, execute: () => ({}) });
  await world.addAgent({ name: 'Lost', provider: 'custom', model: 'm', tools: ['get_weather', 'get_time'] });
  assert.equal(world.unregisterTool('get_weather'), true);
  assert.equal(world.unregisterTool('get_weather'), false);
  const events = record(world);
  await world.send('hi');
  await world.idle();
  const error = events.find(([t, e]) => t === 'system' && e.type === 'error')[1];
  assert.equal(error.code, 'tool_not_registered');
  assert.match(error.message, /get_weather/);
  assert.equal(error.agentName, 'lost');
  assert.equal(provider.requests.length, 0, 'no request was made');
  assert.deepEqual(events.filter(([t]) => t === 'sse').map(([, e]) => e.type), ['start', 'error']);
});

test('setInstructions gives the system prompt per reply; a throwing one fails with llm_error', async () => {
  const world = await AgentWorld.create({ name: name('Instructions') });
  const requests = [];
  world.registerProvider({ async *stream(request) { requests.push(request); yield 'ok'; } });
  await world.addAgent({ name: 'Ada', provider: 'custom', model: 'm', systemPrompt: 'stored' });
  const inputs = [];
  world.setInstructions('ada', async (input) => {
    inputs.push(input);
    return `Answer ${input.message.content} (${inputs.length})`;
  });
  await world.send('one');
  await world.idle();
  await world.send('two');
  await world.idle();
  assert.deepEqual(requests.map((r) => r.messages[0]),
    [{ role: 'system', content: 'Answer one (1)' }, { role: 'system', content: 'Answer two (2)' }]);
  assert.equal(inputs[0].agentName, 'ada');
  assert.equal(inputs[0].chatId, world.currentChat().id);
  assert.equal(inputs[1].message.sender, 'HUMAN');

  world.setInstructions('ada', () => { throw new Error('no prompt today'); });
  const events = record(world);
  await world.send('three');
  await world.idle();
  const error = events.find(([t, e]) => t === 'system' && e.type === 'error')[1];
  assert.equal(error.code, 'llm_error');
  assert.equal(error.agentName, 'ada');
  assert.match(error.message, /ada/);
  assert.match(error.message, /no prompt today/);
  assert.equal(requests.length, 2, 'no request after a failed instructions function');

  world.setInstructions('ada', () => 42);
  const more = record(world);
  await world.send('four');
  await world.idle();
  assert.match(more.find(([t, e]) => t === 'system' && e.type === 'error')[1].message, /must return a string/);

  world.setInstructions('ada', null);
  await world.send('five');
  await world.idle();
  assert.deepEqual(requests.at(-1).messages[0], { role: 'system', content: 'stored' });
  assert.throws(() => world.setInstructions('nobody', () => ''), (e) => e.code === 'agent_not_found');
  assertInvalid(() => world.setInstructions('ada', 'a prompt'), 'instructions');
});

test('agents take tools, maxSteps and reasoning; maxSteps bounds the steps', async () => {
  const world = await AgentWorld.create({ name: name('Agent Tools') });
  const requests = [];
  // A model that always calls the tool again: only maxSteps ends the reply.
  world.registerProvider({
    async *stream(request) {
      requests.push(request);
      if (request.tools.length) yield { toolCalls: [{ name: 'tick' }] };
      else yield 'done';
    },
  });
  let ticks = 0;
  world.registerTool({ name: 'tick', description: 't', parameters: { type: 'object' }, execute: () => ++ticks });
  const agent = await world.addAgent({ name: 'Loop', provider: 'custom', model: 'm', tools: ['tick'],
    maxSteps: 3, reasoning: { effort: 'low' } });
  assert.deepEqual([agent.tools, agent.maxSteps, agent.reasoning], [['tick'], 3, { effort: 'low' }]);
  await world.send('go');
  await world.idle();
  assert.equal(requests.length, 3);
  assert.equal(ticks, 2);
  assert.deepEqual(requests.map((r) => r.tools.length), [1, 1, 0], 'the last step offers no tools');
  assert.deepEqual(requests[0].reasoning, { effort: 'low' });
  const updated = await world.updateAgent('loop', { maxSteps: null, tools: null, reasoning: null });
  assert.deepEqual([updated.tools, updated.maxSteps, updated.reasoning], [undefined, undefined, undefined]);
  await assert.rejects(world.updateAgent('loop', { maxSteps: 51 }), (e) => e.code === 'invalid_input' && /maxSteps/.test(e.message));
});

test('tools() lists the registered tools without their functions', async () => {
  const world = await AgentWorld.create({ name: name('Tool List') });
  assert.deepEqual(world.tools(), []);
  world.registerTool({ ...WEATHER, execute: () => 1 });
  world.registerTool({ name: 'b', description: 'd', parameters: { type: 'object' }, execute: () => 1, timeoutMs: 5000 });
  assert.deepEqual(world.tools(), [
    { ...WEATHER, needsApproval: false, timeoutMs: 30000 },
    { name: 'b', description: 'd', parameters: { type: 'object' }, needsApproval: false, timeoutMs: 5000 },
  ]);
});

test('hostile tool definitions are refused with invalid_input naming the field', async () => {
  const world = await AgentWorld.create({ name: name('Hostile Tools') });
  const ok = { name: 'ok', description: 'd', parameters: { type: 'object' }, execute: () => 1 };
  for (const bad of [undefined, null, 'tool', 42, () => 1]) assertInvalid(() => world.registerTool(bad), 'tool');
  for (const badName of ['', 'a b', 'x'.repeat(65), 'ünï', 42, null, undefined, 'a/b', '../x']) {
    assertInvalid(() => world.registerTool({ ...ok, name: badName }), 'name');
  }
  for (const params of [null, undefined, 'object', 3, [], () => ({})]) {
    assertInvalid(() => world.registerTool({ ...ok, parameters: params }), 'parameters');
  }
  assertInvalid(() => world.registerTool({ ...ok, parameters: { type: 'string' } }), 'parameters.type');
  assertInvalid(() => world.registerTool({ ...ok,
    parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } } }),
  'parameters.properties.n.minimum');
  const cyclic = { type: 'object', properties: {} };
  cyclic.properties.self = cyclic;
  assertInvalid(() => world.registerTool({ ...ok, parameters: cyclic }), 'parameters');
  let deep = { type: 'string' };
  for (let i = 0; i < 100_000; i++) deep = { type: 'object', properties: { x: deep } };
  assertInvalid(() => world.registerTool({ ...ok, parameters: deep }), 'parameters');
  let fortyDeep = { type: 'string' };
  for (let i = 0; i < 40; i++) fortyDeep = { type: 'object', properties: { x: fortyDeep } };
  assertInvalid(() => world.registerTool({ ...ok, parameters: fortyDeep }), 'parameters');
  assertInvalid(() => world.registerTool({ ...ok,
    parameters: { type: 'object', properties: { f: { type: 'string', description: () => 1 } } } }), 'parameters');
  const trap = new Proxy({ type: 'object' }, { get() { throw new Error('gotcha'); } });
  assertInvalid(() => world.registerTool({ ...ok, parameters: trap }), 'parameters');
  const hostileDef = new Proxy(ok, { ownKeys() { throw new Error('no keys'); } });
  assertInvalid(() => world.registerTool(hostileDef), 'tool');
  const getterDef = { ...ok, get execute() { throw new Error('boom'); } };
  assertInvalid(() => world.registerTool(getterDef), 'execute');
  for (const execute of [undefined, null, 'fn', {}, 1]) assertInvalid(() => world.registerTool({ ...ok, execute }), 'execute');
  assertInvalid(() => world.registerTool({ ...ok, description: 'x'.repeat(10 * 1024 * 1024) }), 'description');
  assertInvalid(() => world.registerTool({ ...ok, description: 7 }), 'description');
  for (const timeoutMs of [0, -1, 1.5, 3_600_001, NaN, '100', null]) {
    assertInvalid(() => world.registerTool({ ...ok, timeoutMs }), 'timeoutMs');
  }
  assertInvalid(() => world.registerTool({ ...ok, timeoutMS: 100 }), 'timeoutMS');
  // The error lists every field a definition may have (its text is written out once in
  // src/bindings/tools.rs, beside the list the check uses).
  assert.throws(() => world.registerTool({ ...ok, timeoutMS: 100 }), {
    message: 'tool.timeoutMS is not a tool field; use name, description, parameters, execute, needsApproval, timeoutMs',
  });
  // needsApproval is a boolean or a function of the args (tests/js/approvals.test.mjs).
  for (const needsApproval of ['yes', 1, {}]) assertInvalid(() => world.registerTool({ ...ok, needsApproval }), 'needsApproval');
  assertInvalid(() => world.unregisterTool(42), 'name');
  // None of that was registered, and the world still works (no wasm trap).
  assert.deepEqual(world.tools(), []);
  world.registerTool({ ...ok, needsApproval: false });
  assertInvalid(() => world.registerTool(ok), 'already registered');
  assert.deepEqual(world.tools().map((t) => t.name), ['ok']);
  await world.send('still alive');
});

test('a custom provider yielding malformed toolCalls fails the reply with llm_error', async () => {
  const world = await AgentWorld.create({ name: name('Bad Calls') });
  world.registerProvider({ async *stream() { yield { toolCalls: [{ id: 'x' }] }; } });
  await world.addAgent({ name: 'Bad', provider: 'custom', model: 'm' });
  const events = record(world);
  await world.send('go');
  await world.idle();
  const error = events.find(([t, e]) => t === 'system' && e.type === 'error')[1];
  assert.equal(error.code, 'llm_error');
  assert.match(error.message, /toolCalls\[0\]\.name must be a string/);
});
