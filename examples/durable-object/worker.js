// A Cloudflare Worker whose worlds live in Durable Objects: one Durable Object per world,
// holding the world's data in its own storage through `durableObjectAdapter`.
//
//   GET /?world=<name>&text=<message>  → sends `text` to the world and returns its messages
//
// Every request opens the world from storage (`AgentWorld.open`), so nothing depends on the
// object staying in memory between requests. The agent answers through a custom JavaScript
// provider (no network, no API key); use `world.configureProvider(...)` for a real model.
// The package's `web` build is imported as modules next to this file; workerd cannot fetch
// files, so the .wasm is a compiled module handed to init() (wrangler.toml has the rule).
import { DurableObject } from 'cloudflare:workers';
import init, { AgentWorld } from './agent_world_wasm.js';
import wasmModule from './agent_world_wasm_bg.wasm';
import { durableObjectAdapter } from './storage_adapter.js';

let ready;

export class WorldObject extends DurableObject {
  async fetch(request) {
    ready ??= init({ module_or_path: wasmModule });
    await ready;
    const url = new URL(request.url);
    const text = url.searchParams.get('text') ?? 'hello';
    const storage = durableObjectAdapter(this.ctx.storage);

    const [existing] = await AgentWorld.list({ storage });
    let world;
    if (existing) {
      world = await AgentWorld.open(existing.id, { storage });
    } else {
      world = await AgentWorld.create({ name: url.searchParams.get('world') ?? 'Worker World', storage });
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
    return Response.json({
      world: world.id,
      chat: chat.id,
      messages: messages.map((m) => [m.sender, m.content]),
    });
  }
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get('world') ?? 'Worker World';
    return env.WORLDS.get(env.WORLDS.idFromName(name)).fetch(request);
  },
};
