// A world kept in Deno KV. Run it twice: the second run reopens the world and finds the first
// run's conversation.
//
//   deno run --unstable-kv --allow-read=. --allow-write=. examples/deno-kv/main.js ./worlds.kv "hello"
//
// The agent answers through a custom JavaScript provider, so no network and no API key are
// needed; swap in `world.configureProvider("openai", { apiKey })` for a real model.
// In an application, import the package's `web` build instead of this repository's pkg/.
import init, { AgentWorld } from '../../pkg/web/agent_world_wasm.js';
import { denoKvAdapter } from './kv_adapter.js';

const [path = './agent-world.kv', text = 'hello'] = Deno.args;
await init();
const kv = await Deno.openKv(path);
const storage = denoKvAdapter(kv);

const known = await AgentWorld.list({ storage });
let world;
if (known.some((w) => w.id === 'deno-kv-demo')) {
  world = await AgentWorld.open('deno-kv-demo', { storage });
} else {
  world = await AgentWorld.create({ name: 'Deno KV Demo', storage });
  await world.addAgent({ name: 'Echo', provider: 'custom', model: 'echo' });
}
world.registerProvider({
  async *stream({ messages }) {
    yield `echo: ${messages[messages.length - 1].content}`;
  },
});
if (!world.currentChat()) await world.setSessionMode(true);

await world.send(text);
await world.idle();
const chat = world.currentChat();
const messages = await world.messages(chat.id, { limit: 100 });
console.log(JSON.stringify({
  world: world.id,
  chat: chat.id,
  messages: messages.map((m) => [m.sender, m.content]),
}));
kv.close();
