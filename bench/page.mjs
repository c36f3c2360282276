// The Chromium side of `make bench` (bench/chromium.mjs opens /bench/page.html?mode=…).
// Modes: cold, stream (with and without a tool step), persist, fill, reopen. Each puts {…} or {failure} in globalThis.__result.
import { stats, streamingBench, toolStreamBench, instantProvider, uniqueName, AGENT_REPLY, HUMAN_MESSAGE } from './common.mjs';

const q = new URLSearchParams(location.search);
const mode = q.get('mode');
const reps = Number(q.get('reps') || 5);
const BARE_DB = 'bench-bare';

/** The package's JS glue and its .wasm bytes, fetched but not yet compiled. */
async function loadPackage() {
  const glue = await import('/pkg/web/agent_world_wasm.js');
  const bytes = await (await fetch('/pkg/web/agent_world_wasm_bg.wasm')).arrayBuffer();
  return { glue, bytes };
}

const req = (r) => new Promise((resolve, reject) => {
  r.onsuccess = () => resolve(r.result);
  r.onerror = () => reject(r.error);
});
const done = (tx) => new Promise((resolve, reject) => {
  tx.oncomplete = () => resolve();
  tx.onerror = tx.onabort = () => reject(tx.error);
});

/** A bare IndexedDB database with one object store: the baseline the engine is compared to. */
function openBare() {
  const r = indexedDB.open(BARE_DB, 1);
  r.onupgradeneeded = () => r.result.createObjectStore('messages', { keyPath: 'key' });
  return req(r);
}

/** A record shaped like a stored message (same fields and sizes as the engine writes). */
const bareRecord = (i) => ({
  key: `aww/m/bench/chat/${String(i).padStart(12, '0')}`,
  value: JSON.stringify({ v: 1, messageId: `m-${i}-0000-0000-0000-000000000000`, chatId: 'chat', sender: 'HUMAN', content: HUMAN_MESSAGE, kind: 'message', createdAt: Date.now() }),
});

async function barePuts(db, count, from = 0) {
  const times = [];
  for (let i = from; i < from + count; i++) {
    const t = performance.now();
    const tx = db.transaction('messages', 'readwrite');
    tx.objectStore('messages').put(bareRecord(i));
    await done(tx);
    times.push(performance.now() - t);
  }
  return times;
}

/**
 * `bytes` with a custom section appended that holds `nonce`: the same module to the engine
 * (custom sections are not code), but new bytes to V8, whose process-wide module cache would
 * otherwise hand back an earlier compile of identical bytes.
 */
function withNonce(bytes, nonce) {
  const name = new TextEncoder().encode('bench-nonce');
  const payload = new TextEncoder().encode(nonce);
  const body = [name.length, ...name, ...payload];
  if (body.length > 127) throw new Error('nonce too long');
  const out = new Uint8Array(bytes.byteLength + 2 + body.length);
  out.set(new Uint8Array(bytes), 0);
  out.set([0, body.length, ...body], bytes.byteLength);
  return out;
}

async function cold() {
  // Fetched first: the figure is compile + instantiate + create, not the network.
  const { glue, bytes } = await loadPackage();
  const nonce = `${Date.now()} ${Math.random()}`;
  // Baseline: compiling the same bytes alone (another nonce, so nothing is shared with the
  // timed start below), what any module of this size and shape costs before it can run.
  const t0 = performance.now();
  await WebAssembly.compile(withNonce(bytes, `${nonce} baseline`));
  const compile = performance.now() - t0;
  const t1 = performance.now();
  await glue.default({ module_or_path: withNonce(bytes, nonce) });
  const t2 = performance.now();
  await glue.AgentWorld.create({ name: 'Cold Start' }); // default storage: IndexedDB
  const t3 = performance.now();
  return { compile_ms: compile, init_ms: t2 - t1, create_ms: t3 - t2, total_ms: t3 - t1, wasm_bytes: bytes.byteLength };
}

async function stream() {
  const { glue, bytes } = await loadPackage();
  await glue.default({ module_or_path: bytes });
  // Memory storage: the window ends at the last chunk, before the reply is persisted anyway.
  const common = { AgentWorld: glue.AgentWorld, mockUrl: q.get('mock'), sizes: [1000, 20000], reps, storage: 'memory', log: (l) => console.log(l) };
  return { rows: await streamingBench(common), tool_rows: await toolStreamBench(common) };
}

async function persist() {
  const { glue, bytes } = await loadPackage();
  await glue.default({ module_or_path: bytes });
  const { AgentWorld } = glue;
  const sends = Number(q.get('sends') || 200);
  const turns = Number(q.get('turns') || 1000);

  // A persisted human message (one IndexedDB transaction: message + chat + counters) vs a bare put.
  const quiet = await AgentWorld.create({ name: uniqueName('Bench Persist') });
  const db = await openBare();
  await barePuts(db, 20, 1_000_000); // warm-up
  await quiet.send('warm-up');
  // Timed in blocks of BLOCK, alternated: the page's clock ticks in 0.1 ms steps and a send
  // or a bare put takes a few ticks, so one timed alone is rounded by up to a third. A sample
  // is a block's time per operation.
  const BLOCK = 10;
  const send = [];
  const bare = [];
  for (let i = 0; i < sends; i += BLOCK) {
    const t = performance.now();
    for (let j = 0; j < BLOCK; j++) await quiet.send(HUMAN_MESSAGE);
    send.push((performance.now() - t) / BLOCK);
    const t2 = performance.now();
    await barePuts(db, BLOCK, 2_000_000 + i);
    bare.push((performance.now() - t2) / BLOCK);
  }

  // A conversation: `turns` × (human message + an instant agent's reply), then as many bare
  // puts as messages were stored.
  const world = await AgentWorld.create({ name: uniqueName('Bench Conversation') });
  world.registerProvider(instantProvider);
  await world.addAgent({ name: 'Echo', provider: 'custom', model: 'instant' });
  let published = 0;
  world.on('message', () => published++);
  const perTurn = [];
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) {
    const t = performance.now();
    await world.send(HUMAN_MESSAGE);
    await world.idle();
    perTurn.push(performance.now() - t);
  }
  const conversation = performance.now() - t0;
  const t1 = performance.now();
  await barePuts(db, published, 3_000_000);
  const bareConversation = performance.now() - t1;
  db.close();
  return {
    send_ms: stats(send), bare_put_ms: stats(bare),
    turns, messages: published, conversation_ms: conversation, turn_ms: stats(perTurn),
    bare_conversation_ms: bareConversation,
    raw: { send, bare, per_turn: perTurn },
  };
}

/** Builds a 10,000-message chat: a real export of a small world, its chat grown, imported. */
async function fill() {
  const { glue, bytes } = await loadPackage();
  await glue.default({ module_or_path: bytes });
  const { AgentWorld } = glue;
  const count = Number(q.get('messages') || 10000);
  const small = await AgentWorld.create({ name: uniqueName('Bench Reopen'), storage: 'memory' });
  small.registerProvider(instantProvider);
  await small.addAgent({ name: 'Echo', provider: 'custom', model: 'instant' });
  await small.send(HUMAN_MESSAGE);
  await small.idle();
  const doc = JSON.parse(await small.export());
  const chat = doc.chats.find((c) => c.chat.id === doc.world.currentChatId) ?? doc.chats[0];
  const [human, reply] = chat.messages;
  if (!human || !reply || reply.content !== AGENT_REPLY) throw new Error(`unexpected export: ${JSON.stringify(chat.messages)}`);
  const t = human.createdAt;
  chat.messages = Array.from({ length: count }, (_, i) => {
    const m = { ...(i % 2 ? reply : human), messageId: `bench-${i}`, createdAt: typeof t === 'number' ? t + i : t };
    if (m.replyToMessageId !== undefined) m.replyToMessageId = `bench-${i - 1}`;
    return m;
  });
  const json = JSON.stringify(doc);
  const t0 = performance.now();
  const world = await AgentWorld.import(json);
  const importMs = performance.now() - t0;
  const id = world.id;
  const chatId = world.currentChat()?.id ?? chat.chat.id;
  world.free();

  const db = await openBare();
  const t1 = performance.now();
  const tx = db.transaction('messages', 'readwrite');
  for (let i = 0; i < count; i++) tx.objectStore('messages').put(bareRecord(i));
  await done(tx);
  const bareFill = performance.now() - t1;
  db.close();
  return { id, chatId, messages: count, import_ms: importMs, document_bytes: json.length, bare_fill_ms: bareFill };
}

/**
 * Reopens the filled world in a fresh page (`side=engine`): open, then the first (newest) page
 * of messages; or, in a fresh page of its own (`side=bare`), the baseline: open the bare
 * database and read its newest 50 records with a cursor. Each side gets a page of its own
 * because a page's first IndexedDB connection costs more than its later ones (measured: a
 * bare open took a median 3.6 ms, 0.9–14.8, as a page's first connection, 0.4 ms once the
 * engine had opened its own); timed in one page, one side after the other, that first-use
 * cost fell on whichever side ran first.
 */
async function reopen() {
  // Both sides start from the same page state: the package loaded and instantiated.
  const { glue, bytes } = await loadPackage();
  await glue.default({ module_or_path: bytes });
  if (q.get('side') === 'bare') {
    const t3 = performance.now();
    const db = await openBare();
    const t4 = performance.now();
    const rows = [];
    await new Promise((resolve, reject) => {
      const c = db.transaction('messages').objectStore('messages').openCursor(null, 'prev');
      c.onerror = () => reject(c.error);
      c.onsuccess = () => {
        const cur = c.result;
        if (!cur || rows.length === 50) return resolve();
        rows.push(cur.value);
        cur.continue();
      };
    });
    const t5 = performance.now();
    db.close();
    if (rows.length !== 50) throw new Error(`bare page has ${rows.length} records`);
    return { bare_open_ms: t4 - t3, bare_page_ms: t5 - t4, bare_total_ms: t5 - t3 };
  }
  const t0 = performance.now();
  const world = await glue.AgentWorld.open(q.get('world'));
  const t1 = performance.now();
  const page = await world.messages(q.get('chat'), { limit: 50 });
  const t2 = performance.now();
  if (page.length !== 50) throw new Error(`first page has ${page.length} messages`);
  return { open_ms: t1 - t0, first_page_ms: t2 - t1, total_ms: t2 - t0 };
}

const MODES = { cold, stream, persist, fill, reopen };
try {
  if (!MODES[mode]) throw new Error(`unknown mode ${mode}`);
  globalThis.__result = await MODES[mode]();
} catch (e) {
  globalThis.__result = { failure: String((e && e.stack) || e) };
}
