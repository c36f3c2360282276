// Compiled with `tsc --strict --noEmit` by tests/js/types.test.mjs: the published declarations
// must accept the README's usage, narrow events by topic, and type the errors.
import init, {
  AgentWorld, isAgentWorldError, requestPersistentStorage, storageEstimate, version,
  type Agent, type Chat, type Message, type PendingApproval, type SseEvent, type StorageErrorReason, type WorldInfo,
  type JsonSchema, type ToolContext, type ToolDefinition, type ToolInfo, type JsonValue,
  type ToolCallRecord, type MemoryEntry,
} from "../../../pkg/web/agent_world_wasm.js";

await init();
const world = await AgentWorld.create({ name: "Typed", turnLimit: 3, storage: "memory" });
const reopened: AgentWorld = await AgentWorld.open(world.id);
const worlds: WorldInfo[] = await AgentWorld.list();
const deleted: boolean = await AgentWorld.delete("other");
const copy: AgentWorld = await AgentWorld.import(await world.export(), { storage: "memory" });
world.configureProvider("anthropic", { apiKey: "sk-ant", headers: { "x-trace": "1" } });
world.registerProvider({
  async *stream(request, { signal }) {
    if (!signal.aborted) yield { text: request.messages.at(-1)?.content ?? "", reasoning: "…" };
  },
});
const agent: Agent = await world.addAgent({ name: "A", provider: "custom", model: "m" });
const message: Message = await world.send("hi");
const page: Message[] = await world.messages(message.chatId ?? "", { limit: 5 });
const chat: Chat | null = world.currentChat();
// Each SSE variant narrows on `type` to its own required fields (issue 15: no `?.` needed).
const off: () => void = world.on("sse", (e: SseEvent) => {
  if (e.type === "chunk") { const text: string = e.content; void text.length; }
  if (e.type === "error") { const why: string = e.error; void why; }
  if (e.type === "tool-call") { const call: [string, string, JsonValue] = [e.toolCallId, e.toolName, e.args]; void call; }
  if (e.type === "tool-result") { const out: JsonValue | undefined = e.result ?? e.error; void out; }
  if (e.type === "end") { const used: number | undefined = e.usage?.outputTokens; void used; }
});
world.on("system", (e) => {
  if (e.type === "turn-limit") { const limit: number = e.turnLimit; void limit; }
  if (e.type === "error") { const code: string = e.code; void code; }
  if (e.type === "error" && e.code === "tool_not_registered") { const who: string | undefined = e.agentName; void who; }
  if (e.type === "step-finish") {
    const step: number = e.step;
    const calls: ToolCallRecord[] = e.toolCalls;
    const reason: string | null = e.finishReason;
    void [step, calls, reason];
  }
  if (e.type === "error" && e.code === "storage_error") {
    const why: StorageErrorReason | undefined = e.reason; void why;
  }
});
world.on("system", async (e) => {
  if (e.type === "approval-request") {
    const what: [string, string, unknown] = [e.toolName, e.toolCallId, e.args]; void what;
    await world.approve(e.approvalId);
  }
  if (e.type === "approval-resolved") {
    const outcome: "approved" | "denied" | "cancelled" = e.outcome; void outcome;
  }
});
const pending: PendingApproval[] = world.pendingApprovals();
for (const p of pending) {
  const where: string | null = p.chatId; void where;
  await world.deny(p.approvalId, "no");
  await world.deny(p.approvalId);
}
world.on("world", (e) => {
  if (e.type === "external-change") {
    const changed: [string, string | null] = [e.worldId, e.currentChatId]; void changed;
  }
});
world.on("message", (m) => {
  void m.kind.toUpperCase();
  for (const c of m.toolCalls ?? []) { const r: JsonValue | undefined = c.result; void [c.toolName, c.error, r]; }
});

// Tools: `parameters` is a JSON Schema (no `any`), `execute`'s args follow its annotation.
const cityParameters = {
  type: "object",
  properties: { city: { type: "string", description: "The city" }, days: { type: "integer" } },
  required: ["city"],
  additionalProperties: false,
} as const satisfies JsonSchema;
world.registerTool({
  name: "get_weather",
  description: "Weather",
  parameters: cityParameters,
  execute: async ({ city }: { city: string; days?: number }, { signal, agentName, messageId, toolCallId }: ToolContext) => {
    if (signal.aborted) return null;
    return { city: city.toUpperCase(), by: agentName, ids: [messageId, toolCallId] };
  },
  timeoutMs: 5_000,
});
world.registerTool({ name: "now", parameters: { type: "object" }, execute: () => Date.now() });
const weatherDef: ToolDefinition = {
  name: "untyped_args", parameters: { type: "object" },
  execute: (args) => { const v: JsonValue = args["x"]; return v; },
};
world.registerTool(weatherDef);
const listed: ToolInfo[] = world.tools();
const removed: boolean = world.unregisterTool("now");
world.setInstructions("a", ({ agentName, chatId, message }) => `${agentName} in ${chatId ?? "-"}: ${message.content}`);
world.setInstructions("a", async () => "async prompt");
world.setInstructions("a", null);
const toolAgent: Agent = await world.addAgent({ name: "T", provider: "openai", model: "m",
  tools: ["get_weather"], maxSteps: 3, reasoning: { effort: "high", budgetTokens: 1024 } });
await world.updateAgent("t", { tools: null, maxSteps: 5, reasoning: null });
const toolsOf: string[] | undefined = toolAgent.tools;
const memory: MemoryEntry[] = world.agentMemory("t") ?? [];
const roles = memory.map((m) => (m.role === "tool" ? m.toolCallId : m.toolCalls?.length));
void [listed, removed, toolsOf, roles];
off();
const ac = new AbortController();
await world.send("with a signal", { signal: ac.signal });
for await (const item of world.events({ signal: ac.signal })) {
  if (item.topic === "sse") { const who: string = item.event.agentName; void who; }
  if (item.topic === "world" && item.event.type === "idle") break;
}
await world.idle();
try {
  await world.send("");
} catch (e) {
  if (isAgentWorldError(e)) { const code: "empty_message" | string = e.code; void code; }
  if (isAgentWorldError(e) && e.reason === "quota_exceeded") { await world.deleteChat("old"); }
}
const estimate = await storageEstimate();
const kept: boolean = await requestPersistentStorage();
const v: string = version();
void [reopened, worlds, deleted, copy, agent, page, chat, estimate?.usage, kept, v];
