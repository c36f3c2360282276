// The README quick start's two-agent streamed conversation, then one tool-using reply (a third
// agent whose registered JS tool the mock calls, the result in its answer), as a runtime-neutral function, run
// by every packed-package smoke test (Node ESM and CommonJS, Deno, workerd, a Chromium page and
// worker) against the local mock LLM. Only globalThis is used (no `node:`, `process`, `window`);
// it returns a JSON-able report that assert-conversation.mjs (Node side) checks, identically for
// every runtime. The provider × fault matrix stays in tests/runtimes/ (source-tree builds): this
// file checks the package as installed, so one conversation per runtime is enough.

export const FIRST = 'Should we rewrite our backend in Rust?';
export const SECOND = '@bob, what is the biggest risk?';
/** Then a third agent joins with a tool (README "Tools"): the mock calls it, then answers
 * with its result. */
export const THIRD = '@calc what is 6 times 7?';
export const TOOL_REPLY = 'The product is multiply: {"product":42}';

/** `AgentWorld` and `version` come from the package as the runtime imported it. */
export async function runConversation({ AgentWorld, version, mockUrl }) {
  const report = { version: version(), sse: [], messages: [], errors: [], toolRuns: [] };
  const world = await AgentWorld.create({ name: `Package ${Math.random().toString(36).slice(2)}`,
    turnLimit: 5, storage: 'memory' });
  world.configureProvider('openai', { apiKey: 'sk-test', baseUrl: `${mockUrl}/v1` });
  for (const name of ['Alice', 'Bob']) {
    await world.addAgent({ name, provider: 'openai', model: name.toLowerCase(),
      systemPrompt: `You are ${name}. Answer in one sentence.` });
  }
  // The unsubscribe functions are kept (see tests/runtimes/on-gc.test.mjs).
  const offs = [
    world.on('sse', (e) => report.sse.push({ type: e.type, agentName: e.agentName,
      messageId: e.messageId, content: e.content, toolCallId: e.toolCallId, toolName: e.toolName,
      args: e.args, result: e.result, error: e.error })),
    world.on('message', (m) => report.messages.push({ sender: m.sender, content: m.content,
      kind: m.kind, messageId: m.messageId, toolCalls: m.toolCalls })),
    world.on('system', (e) => { if (e.type === 'error') report.errors.push({ code: e.code, message: e.message }); }),
  ];
  await world.send(FIRST);
  await world.send(SECOND);
  await world.idle();
  // A JS tool in this runtime, called by the mock, its result fed back to the model.
  world.registerTool({
    name: 'multiply',
    description: 'Multiplies two numbers.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    execute: async ({ a, b }, { signal, agentName, messageId, toolCallId }) => {
      report.toolRuns.push({ a, b, agentName, messageId, toolCallId, signal: signal instanceof AbortSignal && !signal.aborted });
      return { product: a * b };
    },
  });
  await world.addAgent({ name: 'Calc', provider: 'openai', model: 'calc', tools: ['multiply'],
    systemPrompt: 'mock-tool: multiply {"a": 6, "b": 7}\nmock-reply: The product is {results}' });
  await world.send(THIRD);
  await world.idle();
  for (const off of offs) off();
  return report;
}
