// Over quota in real headless Chromium with real IndexedDB: the origin's quota is set below
// its usage (CDP `Storage.overrideQuotaForOrigin`), so every write that puts a record fails
// with `quota_exceeded`; the calls that free space (the README's advice: delete old chats)
// must still work, and what they did must survive a reopen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blankPage } from '../support/chromium.mjs';
import { demoAndBrowser } from '../support/demo-browser.mjs';

const env = demoAndBrowser();

/** Defines `window.fill(world)` in the page: fills the origin up with incompressible notes
 * in the current chat (from `system`: nobody answers them) until a write fails, in ever smaller
 * notes so that hardly a byte is left; resolves with the failure's reason. */
function defineFill() {
  window.fill = async (w) => {
    const noise = (n) => Array.from(crypto.getRandomValues(new Uint32Array(n / 7 + 1)),
      (x) => x.toString(36).padStart(7, '0')).join('').slice(0, n);
    let reason = 'never full';
    for (const size of [60_000, 6_000, 600]) {
      for (let notes = 0; notes < 200; notes++) {
        try { await w.send(noise(size), { sender: 'system' }); } catch (e) { reason = e.reason; break; }
      }
    }
    return reason;
  };
}

/** Reloads the page and initialises the module again (a fresh storage connection). */
async function reload(page) {
  await page.reload();
  await page.evaluate(async () => {
    const mod = await import('/pkg/web/agent_world_wasm.js');
    await mod.default();
    window.aww = mod;
  });
  await page.evaluate(defineFill);
}

test('over quota, deleteChat, clearAgentMemory, removeAgent and setSessionMode(false) free space', async () => {
  const context = await env.browser.newContext();
  const { page, errors } = await blankPage(context, env.demo.url);
  // A small quota for the origin, set before its IndexedDB is first opened (Chromium reads
  // it when it opens the origin's storage), then filled up by the world itself.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin',
    { origin: new URL(env.demo.url).origin, quotaSize: 3_000_000 });
  await page.evaluate(defineFill);
  const name = `Quota ${Date.now()}`;
  const setup = await page.evaluate(async ({ name, mockUrl }) => {
    const world = await window.aww.AgentWorld.create({ name });
    world.configureProvider('openai-compatible', { baseUrl: `${mockUrl}/compat/v1` });
    for (const n of ['Alice', 'Bob', 'Carol']) {
      await world.addAgent({ name: n, provider: 'openai-compatible', model: `mock-${n}`,
        systemPrompt: `mock-reply: ${n} answers` });
    }
    const chats = [];
    for (const text of ['First chat', 'Second chat', 'Third chat']) {
      if (chats.length) await world.newChat();
      await world.send(text);
      await world.idle();
      chats.push(world.currentChat().id);
    }
    return { id: world.id, chats, reason: await window.fill(world),
      memory: world.agentMemory('alice').length };
  }, { name, mockUrl: env.demo.mockUrl });
  assert.equal(setup.reason, 'quota_exceeded', 'the origin filled up');
  assert.equal(setup.memory, 2, 'alice heard the message and answered');
  const [first, second, third] = setup.chats;

  const freed = await page.evaluate(async ({ id, first, third }) => {
    const w = await window.aww.AgentWorld.open(id);
    const out = { errors: [] };
    w.on('system', (e) => { if (e.type === 'error') out.errors.push(e.reason); });
    // Each call runs with the origin full again (what the one before freed is filled up).
    const run = async (what, f) => {
      const full = await window.fill(w);
      if (full !== 'quota_exceeded') { out[what] = `not full: ${full}`; return; }
      try { out[what] = await f(); } catch (e) { out[what] = `${e.code}/${e.reason}: ${e.message}`; }
    };
    await run('send', () => w.send('one more'));
    await run('deleteChat other', () => w.deleteChat(first));
    await run('clearAgentMemory', async () => { await w.clearAgentMemory('alice'); return w.agentMemory('alice').length; });
    await run('removeAgent', () => w.removeAgent('bob'));
    await run('deleteChat current', async () => { await w.deleteChat(third); return w.currentChat()?.id; });
    out.chats = w.listChats().map((c) => c.id);
    out.agents = w.agents().map((a) => a.id);
    return out;
  }, { id: setup.id, first, third });
  assert.match(String(freed.send), /quota_exceeded/, JSON.stringify(freed));
  assert.equal(freed['deleteChat other'], true, JSON.stringify(freed));
  assert.equal(freed.clearAgentMemory, 0, JSON.stringify(freed));
  assert.equal(freed.removeAgent, true, JSON.stringify(freed));
  assert.equal(freed['deleteChat current'], second, JSON.stringify(freed));
  assert.deepEqual(freed.chats, [second]);
  assert.deepEqual(freed.agents, ['alice', 'carol']);
  assert.ok(freed.errors.every((r) => r === 'quota_exceeded'), JSON.stringify(freed.errors));

  // What was freed stays freed: the world opened again in a reloaded page.
  await reload(page);
  const reopened = await page.evaluate(async (id) => {
    const w = await window.aww.AgentWorld.open(id);
    return { chats: w.listChats().map((c) => c.id), agents: w.agents().map((a) => a.id),
      current: w.currentChat()?.id, memory: w.agentMemory('alice').length };
  }, setup.id);
  assert.deepEqual(reopened.chats, [second]);
  assert.deepEqual(reopened.agents, ['alice', 'carol']);
  // Whether or not the pointer to the deleted current chat could be rewritten after the
  // delete freed space, it resolves as deleteChat did.
  assert.equal(reopened.current, second);
  assert.equal(reopened.memory, 2, "the second chat's memory of alice");

  // Turning session mode off works over quota too (kept in RAM if it cannot be stored).
  const off = await page.evaluate(async (id) => {
    const w = await window.aww.AgentWorld.open(id);
    const full = await window.fill(w);
    try { await w.setSessionMode(false); } catch (e) { return `${e.code}/${e.reason}: ${e.message}`; }
    const m = await w.send('not kept').catch((e) => ({ chatId: `${e.code}/${e.reason}` }));
    return { full, current: w.currentChat(), chatId: m.chatId };
  }, setup.id);
  assert.deepEqual(off, { full: 'quota_exceeded', current: null, chatId: null });
  assert.deepEqual(errors, []);
  await context.close();
});
