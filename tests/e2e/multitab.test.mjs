// Several tabs on one world, in real headless Chromium with real IndexedDB: two pages of one
// browser context (so they share the database, the Web Locks and the BroadcastChannel) send
// interleaved messages at the same time against the mock LLM; nothing is lost or duplicated,
// the stored counts are right, and each page's view follows the other's writes. Then storage
// failures are injected in a page (quota, aborted transaction, a newer tab's versionchange, a
// corrupted and a newer-format record) and each is checked through the public API: the
// rejection's code and reason, the `system` `error` event, the committed messages intact, and a
// world that keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blankPage as blankPageOf } from '../support/chromium.mjs';
import { demoAndBrowser } from '../support/demo-browser.mjs';

const env = demoAndBrowser();

/** A same-origin page with nothing on it but the module, loaded and initialised. */
const blankPage = (context) => blankPageOf(context, env.demo.url);

/** Opens the world in the page as `window.world`, recording its `world` and `system` events. */
async function openIn(page, worldId, mockUrl) {
  await page.evaluate(async ({ worldId, mockUrl }) => {
    const world = await window.aww.AgentWorld.open(worldId);
    world.configureProvider('openai-compatible', { baseUrl: `${mockUrl}/compat/v1` });
    window.world = world;
    window.changes = [];
    window.systemErrors = [];
    world.on('world', (e) => { if (e.type === 'external-change') window.changes.push(e); });
    world.on('system', (e) => { if (e.type === 'error') window.systemErrors.push(e); });
  }, { worldId, mockUrl });
}

/** What the database holds of the world's current chat, read through a fresh world in `page`. */
async function storedTruth(page, worldId) {
  return page.evaluate(async (worldId) => {
    const world = await window.aww.AgentWorld.open(worldId);
    const chat = world.currentChat();
    const doc = JSON.parse(await world.export());
    const exported = doc.chats.find((x) => x.chat.id === chat.id);
    return {
      chatId: chat.id,
      messageCount: chat.messageCount,
      messages: (await world.messages(chat.id, { limit: 1000 }))
        .map((m) => ({ id: m.messageId, sender: m.sender, content: m.content, replyTo: m.replyToMessageId ?? null })),
      memory: (exported.memories.find((g) => g.agentId === 'alice')?.entries ?? []).map((e) => [e.role, e.content]),
      counter: exported.agentStates.find((s) => s.agentId === 'alice')?.llmCallCount,
    };
  }, worldId);
}

/** Every writer's `N` messages (`<tag><i>`) are stored once, in each writer's order, each with
 * exactly one reply of alice after it; the count, the memory and the counter agree. */
function assertNothingLost(stored, tags, N) {
  const humans = stored.messages.filter((m) => m.sender === 'HUMAN').map((m) => m.content);
  const expected = tags.flatMap((tag) => [...Array(N).keys()].map((i) => `${tag}${i}`));
  assert.deepEqual([...humans].sort(), [...expected].sort(), 'every human message exactly once');
  for (const tag of tags) {
    assert.deepEqual(humans.filter((h) => h.startsWith(tag)), [...Array(N).keys()].map((i) => `${tag}${i}`));
  }
  const total = tags.length * N;
  const replies = stored.messages.filter((m) => m.sender === 'alice');
  assert.equal(replies.length, total, JSON.stringify(stored.messages));
  const position = new Map(stored.messages.map((m, i) => [m.id, i]));
  for (const r of replies) assert.ok(position.get(r.replyTo) < position.get(r.id), `${r.id} after its trigger`);
  assert.equal(new Set(replies.map((r) => r.replyTo)).size, total, 'no message answered twice');
  assert.equal(stored.messageCount, stored.messages.length, 'messageCount is the number of messages');
  assert.equal(stored.messageCount, 2 * total);
  // Alice remembers every exchange once: the human message, then her reply.
  assert.equal(stored.memory.length, 2 * total);
  assert.deepEqual(stored.memory.filter(([role]) => role === 'user').map(([, c]) => c).sort(), [...expected].sort());
  // Every human message resets the counter and the reply raises it again.
  assert.equal(stored.counter, 1);
}

test('two tabs sending at once lose nothing and see each other\'s writes', async () => {
  const context = await env.browser.newContext();
  const a = await blankPage(context);
  const b = await blankPage(context);
  const name = `Tabs ${Date.now()}`;
  const worldId = await a.page.evaluate(async ({ name }) => {
    const world = await window.aww.AgentWorld.create({ name });
    await world.addAgent({ name: 'Alice', provider: 'openai-compatible', model: 'mock-alice',
      systemPrompt: 'mock-reply: ack {n}\nmock-delay: 5' });
    return world.id;
  }, { name });
  await openIn(a.page, worldId, env.demo.mockUrl);
  await openIn(b.page, worldId, env.demo.mockUrl);
  const N = 8;
  const sendAll = async ({ tag, N }) => {
    for (let i = 0; i < N; i++) await window.world.send(`${tag}${i}`);
    await window.world.idle();
  };
  await Promise.all([a.page.evaluate(sendAll, { tag: 'A', N }), b.page.evaluate(sendAll, { tag: 'B', N })]);
  // Each tab answers its own messages: once both are idle, every reply is stored.
  await Promise.all([a.page.evaluate(() => window.world.idle()), b.page.evaluate(() => window.world.idle())]);

  // The stored truth, read by a third page.
  const c = await blankPage(context);
  const stored = await storedTruth(c.page, worldId);
  assertNothingLost(stored, ['A', 'B'], N);
  // Each tab's view follows the other's writes once told (BroadcastChannel → reload).
  for (const { page } of [a, b]) {
    await page.waitForFunction((n) => window.world.currentChat().messageCount === n, 4 * N, { timeout: 30_000 });
    const view = await page.evaluate(async () => {
      const chat = window.world.currentChat();
      return {
        chats: window.world.listChats().map((x) => [x.id, x.messageCount]),
        messages: (await window.world.messages(chat.id, { limit: 1000 })).length,
        changes: window.changes.length,
        worldIds: [...new Set(window.changes.map((e) => e.worldId))],
        errors: window.systemErrors,
      };
    });
    assert.deepEqual(view.chats, [[stored.chatId, 4 * N]]);
    assert.equal(view.messages, 4 * N);
    assert.ok(view.changes >= 1, 'external-change was emitted');
    assert.deepEqual(view.worldIds, [worldId]);
    assert.deepEqual(view.errors, []);
  }
  // A chat made in one tab shows up in the other, which follows the switch.
  const newChat = await b.page.evaluate(async () => { await window.world.send('keep this chat'); return (await window.world.newChat()).id; });
  await a.page.waitForFunction((id) => window.world.currentChat()?.id === id, newChat, { timeout: 30_000 });
  assert.equal(await a.page.evaluate(() => window.world.listChats().length), 2);
  assert.deepEqual([...a.errors, ...b.errors, ...c.errors], []);
  await context.close();
});

test('two tabs creating the same world at once: one creates it, the other gets world_exists', async () => {
  const context = await env.browser.newContext();
  const a = await blankPage(context);
  const b = await blankPage(context);
  for (let round = 0; round < 3; round++) {
    const name = `Both ${Date.now()} ${round}`;
    const create = async (name) => {
      try {
        const world = await window.aww.AgentWorld.create({ name });
        window.created = world;
        return 'ok';
      } catch (e) {
        return e.code;
      }
    };
    const codes = await Promise.all([a.page.evaluate(create, name), b.page.evaluate(create, name)]);
    assert.deepEqual([...codes].sort(), ['ok', 'world_exists'], `round ${round}`);
    // One world with one chat; the winner's world keeps working (its revision is right: a
    // change after the create needs no reload and conflicts with nothing).
    const winner = codes[0] === 'ok' ? a : b;
    const after = await winner.page.evaluate(async () => {
      const chat = window.created.currentChat();
      await window.created.send('first');
      const world = await window.aww.AgentWorld.open(window.created.id);
      return { chats: world.listChats().length, count: world.currentChat().messageCount, same: world.currentChat().id === chat.id };
    });
    assert.deepEqual(after, { chats: 1, count: 1, same: true });
  }
  assert.deepEqual([...a.errors, ...b.errors], []);
  await context.close();
});

test('a tab\'s first calls at once share one database connection', async () => {
  const context = await env.browser.newContext();
  const { page, errors } = await blankPage(context);
  const result = await page.evaluate(async () => {
    let opens = 0;
    const open = IDBFactory.prototype.open;
    IDBFactory.prototype.open = function (...args) {
      opens += 1;
      return open.apply(this, args);
    };
    const stamp = Date.now();
    const [x, y, list] = await Promise.all([
      window.aww.AgentWorld.create({ name: `One ${stamp}` }),
      window.aww.AgentWorld.create({ name: `Two ${stamp}` }),
      window.aww.AgentWorld.list(),
    ]);
    const z = await window.aww.AgentWorld.open(x.id);
    IDBFactory.prototype.open = open;
    return { opens, ids: [x.id, y.id, z.id], listed: Array.isArray(list) };
  });
  assert.equal(result.opens, 1, 'one indexedDB.open for every world of the module');
  assert.equal(result.ids[0], result.ids[2]);
  assert.ok(result.listed);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a tab and a dedicated worker sending at once lose nothing', async () => {
  const context = await env.browser.newContext();
  const a = await blankPage(context);
  const name = `Worker ${Date.now()}`;
  const worldId = await a.page.evaluate(async ({ name }) => {
    const world = await window.aww.AgentWorld.create({ name });
    await world.addAgent({ name: 'Alice', provider: 'openai-compatible', model: 'mock-alice',
      systemPrompt: 'mock-reply: ack {n}\nmock-delay: 5' });
    return world.id;
  }, { name });
  await openIn(a.page, worldId, env.demo.mockUrl);
  const N = 6;
  // The worker runs the same web build on its own; it shares the page's IndexedDB, Web Locks
  // and BroadcastChannel (same origin).
  const workerRun = a.page.evaluate(({ worldId, mockUrl, N }) => new Promise((resolve, reject) => {
    const src = `
      import init, { AgentWorld } from '${location.origin}/pkg/web/agent_world_wasm.js';
      await init();
      self.onmessage = async ({ data }) => {
        try {
          const world = await AgentWorld.open(data.worldId);
          world.configureProvider('openai-compatible', { baseUrl: data.mockUrl + '/compat/v1' });
          for (let i = 0; i < data.N; i++) await world.send('W' + i);
          await world.idle();
          self.postMessage({ done: true });
        } catch (e) { self.postMessage({ error: String(e && e.message || e) }); }
      };
      self.postMessage({ ready: true });`;
    const worker = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), { type: 'module' });
    worker.onerror = (e) => reject(new Error(e.message));
    worker.onmessage = ({ data }) => {
      if (data.ready) worker.postMessage({ worldId, mockUrl, N });
      else if (data.done) { worker.terminate(); resolve(); }
      else reject(new Error(data.error));
    };
  }), { worldId, mockUrl: env.demo.mockUrl, N });
  const pageRun = a.page.evaluate(async (N) => {
    for (let i = 0; i < N; i++) await window.world.send(`P${i}`);
    await window.world.idle();
  }, N);
  await Promise.all([workerRun, pageRun]);
  await a.page.evaluate(() => window.world.idle());
  const c = await blankPage(context);
  assertNothingLost(await storedTruth(c.page, worldId), ['P', 'W'], N);
  // The page's own view follows the worker's writes.
  await a.page.waitForFunction((n) => window.world.currentChat().messageCount === n, 4 * N, { timeout: 30_000 });
  assert.deepEqual(await a.page.evaluate(() => window.systemErrors), []);
  assert.deepEqual([...a.errors, ...c.errors], []);
  await context.close();
});

/** A page with a world holding one committed exchange, opened as `window.world`. */
async function worldWithHistory(context, label) {
  const { page, errors } = await blankPage(context);
  const worldId = await page.evaluate(async ({ name, mockUrl }) => {
    const world = await window.aww.AgentWorld.create({ name });
    world.configureProvider('openai-compatible', { baseUrl: `${mockUrl}/compat/v1` });
    await world.addAgent({ name: 'Alice', provider: 'openai-compatible', model: 'mock-alice',
      systemPrompt: 'mock-reply: noted' });
    await world.send('committed before the failure');
    await world.idle();
    return world.id;
  }, { name: `${label} ${Date.now()}`, mockUrl: env.demo.mockUrl });
  await openIn(page, worldId, env.demo.mockUrl);
  return { page, errors, worldId };
}

/** Sends in the page and returns the rejection (code, reason, name) and the system error events. */
const sendFailing = (text) => (async (text) => {
  window.systemErrors.length = 0;
  try {
    await window.world.send(text);
    return { resolved: true };
  } catch (e) {
    return { name: e.name, code: e.code, reason: e.reason, message: e.message,
      cause: e.cause === undefined ? undefined : { name: e.cause.name, message: e.cause.message },
      events: window.systemErrors.map((x) => ({ code: x.code, reason: x.reason, message: x.message })) };
  }
})(text);

/** The contents of the current chat, read through the page's world. */
const contents = () => (async () => {
  const chat = window.world.currentChat();
  return { count: chat.messageCount, messages: (await window.world.messages(chat.id, { limit: 100 })).map((m) => m.content) };
})();

for (const [label, reason, patch] of [
  // Chromium fails a write with a QuotaExceededError DOMException when the origin is full.
  ['a quota', 'quota_exceeded', () => {
    const add = IDBObjectStore.prototype.add;
    IDBObjectStore.prototype.add = function (...args) {
      IDBObjectStore.prototype.add = add;
      throw new DOMException('the quota has been exceeded', 'QuotaExceededError');
    };
  }],
  // Something aborts the write transaction half-way.
  ['an aborted-transaction', 'aborted', () => {
    const add = IDBObjectStore.prototype.add;
    IDBObjectStore.prototype.add = function (...args) {
      IDBObjectStore.prototype.add = add;
      const request = add.apply(this, args);
      this.transaction.abort();
      return request;
    };
  }],
]) {
  test(`${label} failure rejects with reason ${reason}, is reported, and the world keeps working`, async () => {
    const context = await env.browser.newContext();
    const { page, errors } = await worldWithHistory(context, label.replace(/^an? /, ''));
    await page.evaluate(patch);
    const failed = await page.evaluate(sendFailing, 'lost');
    assert.equal(failed.name, 'AgentWorldError');
    assert.equal(failed.code, 'storage_error');
    assert.equal(failed.reason, reason, failed.message);
    if (reason === 'quota_exceeded') {
      // The browser's own exception rides along as `cause`.
      assert.deepEqual(failed.cause, { name: 'QuotaExceededError', message: 'the quota has been exceeded' });
    }
    assert.deepEqual(failed.events, [{ code: 'storage_error', reason, message: failed.message }]);
    assert.deepEqual(await page.evaluate(contents), { count: 2, messages: ['committed before the failure', 'noted'] });
    await page.evaluate(async () => { await window.world.send('after the failure'); await window.world.idle(); });
    assert.deepEqual(await page.evaluate(contents),
      { count: 4, messages: ['committed before the failure', 'noted', 'after the failure', 'noted'] });
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('a newer tab\'s versionchange closes the connection: closed on the next write, a reopen works', async () => {
  const context = await env.browser.newContext();
  const { page, errors, worldId } = await worldWithHistory(context, 'Upgrade');
  // Another tab asks for a newer version; its upgrade then fails, so the data stays as it was,
  // but our connection has given way (closed) as it must.
  const other = await context.newPage();
  await other.goto(`${env.demo.url}__blank`);
  await other.evaluate(() => new Promise((resolve) => {
    const probe = indexedDB.open('agent-world-wasm');
    probe.onsuccess = () => {
      const version = probe.result.version;
      probe.result.close();
      const req = indexedDB.open('agent-world-wasm', version + 1);
      req.onupgradeneeded = () => req.transaction.abort();
      req.onerror = () => resolve();
      req.onsuccess = () => { req.result.close(); resolve(); };
    };
  }));
  const failed = await page.evaluate(sendFailing, 'lost');
  assert.equal(failed.code, 'storage_error');
  assert.equal(failed.reason, 'closed', failed.message);
  assert.match(failed.message, /another tab/);
  assert.deepEqual(failed.events.map((e) => e.reason), ['closed']);
  // Opening the world again opens a new connection; nothing committed was lost.
  await openIn(page, worldId, env.demo.mockUrl);
  assert.deepEqual(await page.evaluate(contents), { count: 2, messages: ['committed before the failure', 'noted'] });
  await page.evaluate(async () => { await window.world.send('after reopening'); await window.world.idle(); });
  assert.equal((await page.evaluate(contents)).count, 4);
  assert.deepEqual(errors, []);
  await context.close();
});

for (const [label, reason, row] of [
  ['corrupted', 'corrupted', (r) => { delete r.v; }],
  ['newer-format', 'version', (r) => { r.v = 99; }],
]) {
  test(`a ${label} message record fails reads with reason ${reason} (rejection and system event); writes keep working`, async () => {
    const context = await env.browser.newContext();
    const { page, errors, worldId } = await worldWithHistory(context, label);
    // Damage the first stored message of the chat with raw IndexedDB.
    await page.evaluate(({ worldId, rowSrc }) => new Promise((resolve, reject) => {
      const damage = eval(rowSrc);
      const req = indexedDB.open('agent-world-wasm');
      req.onsuccess = () => {
        const db = req.result;
        const tx = db.transaction('messages', 'readwrite');
        const store = tx.objectStore('messages');
        const cursor = store.openCursor(IDBKeyRange.bound([worldId], [worldId, []]));
        cursor.onsuccess = () => {
          const c = cursor.result;
          const value = c.value;
          damage(value);
          c.update(value);
        };
        tx.oncomplete = () => { db.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }), { worldId, rowSrc: `(${row.toString()})` });
    const read = await page.evaluate(async () => {
      window.systemErrors.length = 0;
      const chat = window.world.currentChat();
      try { await window.world.messages(chat.id, { limit: 100 }); return { resolved: true }; }
      catch (e) {
        return { name: e.name, code: e.code, reason: e.reason, message: e.message,
          events: window.systemErrors.map((x) => ({ code: x.code, reason: x.reason, message: x.message })) };
      }
    });
    assert.equal(read.code, 'storage_error');
    assert.equal(read.reason, reason, read.message);
    assert.match(read.message, /messages record/);
    // The failed read is reported as a `system` `error` event too.
    assert.deepEqual(read.events, [{ code: 'storage_error', reason, message: read.message }]);
    // Writing still works, and the newest page (after the damaged record) reads fine.
    await page.evaluate(async () => { await window.world.send('still writing'); await window.world.idle(); });
    const tail = await page.evaluate(async () => {
      const chat = window.world.currentChat();
      return { count: chat.messageCount, last: (await window.world.messages(chat.id, { limit: 2 })).map((m) => m.content) };
    });
    assert.deepEqual(tail, { count: 4, last: ['still writing', 'noted'] });
    assert.deepEqual(errors, []);
    await context.close();
  });
}
