// Must NOT compile: proves the declarations are checked, not `any`.
import { AgentWorld, isAgentWorldError } from "../../../pkg/web/agent_world_wasm.js";
const world = await AgentWorld.create({ name: "Wrong" });
await world.send(42);
await world.addAgent({ name: "A", provider: "not-a-provider", model: "m" });
world.on("sse", (e) => e.turnLimit);
world.on("world", (e) => e.type === "external-change" && e.chatId);
world.on("system", (e) => e.type === "approval-resolved" && e.toolName);
try { await world.idle(); } catch (e) { if (isAgentWorldError(e) && e.reason === "disk_full") throw e; }
world.registerTool({ name: "t", parameters: { type: "object", minimum: 1 }, execute: () => 1 });
world.registerTool({ name: "t", parameters: { type: "string" }, execute: () => 1 });
world.on("sse", (e) => e.type === "start" && e.content);
