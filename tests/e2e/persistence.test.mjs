// Persistence in real headless Chromium with real IndexedDB: a conversation survives a page
// reload, and killing the page mid-stream loses neither the human message nor the replies that
// had completed. Runs the web build on a blank page of the demo server's origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blankPage as blankPageOf } from '../support/chromium.mjs';
import { demoAndBrowser } from '../support/demo-browser.mjs';

const env = demoAndBrowser();

/** A same-origin page with nothing on it but the module, loaded and initialised. */
const blankPage = (context) => blankPageOf(context, env.demo.url);

/** Everything a user would expect back after a reload. */
const snapshot = (worldId) => (async (id) => {
  const world = await window.aww.AgentWorld.open(id);
  const chat = world.currentChat();
  const agents = world.agents().map((a) => ({ id: a.id, llmCallCount: a.llmCallCount }));
  return {
    chat: chat && { id: chat.id, name: chat.name, titleSource: chat.titleSource, messageCount: chat.messageCount },
    chats: world.listChats().map((c) => [c.id, c.name, c.messageCount]),
    agents,
    messages: (await world.messages(chat.id, { limit: 100 })).map((m) => [m.sender, m.kind, m.content]),
    memory: Object.fromEntries(agents.map((a) => [a.id, world.agentMemory(a.id).map((e) => [e.role, e.content])])),
  };
})(worldId);

test('a conversation, its chat title, memories and counters survive a reload', async () => {
  const context = await env.browser.newContext();
  const { page, errors } = await blankPage(context);
  const name = `Reload ${Date.now()}`;
  const worldId = await page.evaluate(async ({ name, mockUrl }) => {
    const world = await window.aww.AgentWorld.create({ name, turnLimit: 2 });
    world.configureProvider('openai-compatible', { baseUrl: `${mockUrl}/compat/v1` });
    await world.addAgent({ name: 'Alice', provider: 'openai-compatible', model: 'mock-alice',
      systemPrompt: 'mock-reply: @bob ping {n}' });
    await world.addAgent({ name: 'Bob', provider: 'openai-compatible', model: 'mock-bob',
      systemPrompt: 'mock-reply: @alice pong {n}' });
    await world.send('@alice How do we plan the launch?');
    await world.idle();
    return world.id;
  }, { name, mockUrl: env.demo.mockUrl });
  const beforeReload = await page.evaluate(snapshot, worldId);
  assert.equal(beforeReload.chat.name, 'How do we plan the launch?');
  assert.equal(beforeReload.chat.titleSource, 'auto');
  assert.equal(beforeReload.messages.length, 6, JSON.stringify(beforeReload.messages));
  assert.equal(beforeReload.messages.at(-1)[1], 'turn-limit');
  assert.deepEqual(beforeReload.agents, [{ id: 'alice', llmCallCount: 2 }, { id: 'bob', llmCallCount: 2 }]);
  assert.ok(beforeReload.memory.alice.length >= 3);

  await page.reload();
  await page.evaluate(async () => {
    const mod = await import('/pkg/web/agent_world_wasm.js');
    await mod.default();
    window.aww = mod;
  });
  const afterReload = await page.evaluate(snapshot, worldId);
  assert.deepEqual(afterReload, beforeReload);
  // The storage manager: usage is reported, and a persistence request gets a yes or a no.
  const storage = await page.evaluate(async () => ({
    estimate: await window.aww.storageEstimate(),
    persisted: await window.aww.requestPersistentStorage(),
  }));
  assert.ok(storage.estimate.usage > 0 && storage.estimate.quota > storage.estimate.usage,
    JSON.stringify(storage.estimate));
  assert.equal(typeof storage.persisted, 'boolean');
  assert.deepEqual(errors, []);
  await context.close();
});

test('killing the page mid-stream keeps the human message and every completed reply', async () => {
  const context = await env.browser.newContext();
  const { page } = await blankPage(context);
  const name = `Crash ${Date.now()}`;
  const worldId = await page.evaluate(async ({ name, mockUrl }) => {
    const world = await window.aww.AgentWorld.create({ name });
    world.configureProvider('openai-compatible', { baseUrl: `${mockUrl}/compat/v1` });
    await world.addAgent({ name: 'Quick', provider: 'openai-compatible', model: 'mock-quick',
      systemPrompt: 'mock-reply: done quickly' });
    await world.addAgent({ name: 'Slow', provider: 'openai-compatible', model: 'mock-slow',
      systemPrompt: 'mock-reply: one two three four five six seven eight nine ten\nmock-delay: 400' });
    window.chunks = 0;
    world.on('sse', (e) => { if (e.agentName === 'slow' && e.type === 'chunk') window.chunks++; });
    await world.send('Everyone, report in.');
    return world.id;
  }, { name, mockUrl: env.demo.mockUrl });
  // Slow has started streaming (so Quick has finished: the queue runs one call at a time).
  await page.waitForFunction(() => window.chunks >= 2, null, { timeout: 15_000 });
  await page.close(); // the tab is gone mid-stream, as if the user closed it
  const { page: again } = await blankPage(context);
  const state = await again.evaluate(snapshot, worldId);
  assert.deepEqual(state.messages, [
    ['HUMAN', 'message', 'Everyone, report in.'],
    ['quick', 'message', 'done quickly'],
  ]);
  assert.deepEqual(state.memory.quick, [['user', 'Everyone, report in.'], ['assistant', 'done quickly']]);
  // Slow's turn was counted when it started; the call it lost can be asked again.
  assert.equal(state.agents.find((a) => a.id === 'slow').llmCallCount, 1);
  await context.close();
});
