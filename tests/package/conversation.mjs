// The README quick start's two-agent streamed conversation as a runtime-neutral function, run
// by every packed-package smoke test (Node ESM and CommonJS, Deno, workerd, a Chromium page and
// worker) against the local mock LLM. Only globalThis is used (no `node:`, `process`, `window`);
// it returns a JSON-able report that assert-conversation.mjs (Node side) checks, identically for
// every runtime. The provider × fault matrix stays in tests/runtimes/ (source-tree builds): this
// file checks the package as installed, so one conversation per runtime is enough.

export const FIRST = 'Should we rewrite our backend in Rust?';
export const SECOND = '@bob, what is the biggest risk?';

/** `AgentWorld` and `version` come from the package as the runtime imported it. */
export async function runConversation({ AgentWorld, version, mockUrl }) {
  const report = { version: version(), sse: [], messages: [], errors: [] };
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
      messageId: e.messageId, content: e.content })),
    world.on('message', (m) => report.messages.push({ sender: m.sender, content: m.content,
      kind: m.kind, messageId: m.messageId })),
    world.on('system', (e) => { if (e.type === 'error') report.errors.push({ code: e.code, message: e.message }); }),
  ];
  await world.send(FIRST);
  await world.send(SECOND);
  await world.idle();
  for (const off of offs) off();
  return report;
}
