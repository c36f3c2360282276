// Compiled with `tsc --strict --noEmit` by tests/js/types.test.mjs: the published declarations
// must accept the README's usage, narrow events by topic, and type the errors.
import init, {
  AgentWorld, isAgentWorldError, requestPersistentStorage, storageEstimate, version,
  type Agent, type Chat, type Message, type PendingApproval, type SseEvent, type StorageErrorReason,
  type WorldInfo,
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
const off: () => void = world.on("sse", (e: SseEvent) => void e.content?.length);
world.on("system", (e) => {
  if (e.type === "turn-limit") { const limit: number = e.turnLimit; void limit; }
  if (e.type === "error") { const code: string = e.code; void code; }
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
world.on("message", (m) => void m.kind.toUpperCase());
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
