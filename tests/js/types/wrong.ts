// Must NOT compile: proves the declarations are checked, not `any`.
import { AgentWorld } from "../../../pkg/web/agent_world_wasm.js";
const world = await AgentWorld.create({ name: "Wrong" });
await world.send(42);
await world.addAgent({ name: "A", provider: "not-a-provider", model: "m" });
world.on("sse", (e) => e.turnLimit);
