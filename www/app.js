// The demo app: worlds, agents, chats and a live, streaming conversation, all in the page.
// Plain ES modules over the package's `web` build (explicit init), no framework, no build step.
import init, { AgentWorld, isAgentWorldError, version } from '/pkg/web/agent_world_wasm.js';
import { $, append, bdi, h, plainText, setAgentOrder } from './dom.js';
import { attachMentions, mentionsOf } from './mentions.js';
import { listModels, modelListRequest } from './providers.js';
import { registerDemoTools } from './tools.js';
import { ChatView, addDebug, renderAgents, renderChats, renderWorlds } from './render.js';
import {
  FIELD_LABELS, PROVIDERS, addNote, dropNotes, effectiveProviders, loadNotes, loadPlace, loadRemembered,
  loadTheme, persistSettings, savePlace, saveTheme, setProviders, state,
} from './state.js';

/** The open world handle, and the unsubscribe functions of its event callbacks. */
let world = null;
let offs = [];
let agents = [];
const working = new Set();
let busy = false;
let lastHuman = null;
/** Until this time, `llm_aborted` errors are ours (stop, chat switch) and are not shown. */
let quietAbortsUntil = 0;

/** Whether the open world offers an engine call (the editing API of the contract's §10 may not
 * be in this build): a message action is shown only when its call exists. */
const can = (name) => typeof world?.[name] === 'function';

const view = new ChatView($('messages'), {
  onRetry: (e) => retry(e),
  onSuggest: (text) => {
    sendMessage(text);
    $('input').focus();
  },
  onAddAgent: () => openAgentDialog(),
  onApproval: (approvalId, approve) => answerApproval(approvalId, approve),
  actions: {
    get regenerate() { return can('regenerate') ? (m) => guard('Could not regenerate', () => regenerate(m.messageId)) : null; },
    get edit() { return can('editMessage') ? (m) => startEdit(m) : null; },
    get remove() { return can('deleteMessage') ? (m) => guard('Could not delete the message', () => deleteMessage(m)) : null; },
  },
  pill: $('new-pill'),
});

const storageOpts = () => ({ storage: state.storage });
const worldOpts = () => ({ storage: state.storage, debug: state.debug });

// ---------------------------------------------------------------------------------------------
// Status and errors

let statusTimer = 0;
/** The status line: `text` is a string, or parts (strings and nodes, names in `bdi()`). */
function status(text, kind = 'info', ms = 0) {
  const el = $('status');
  clearTimeout(statusTimer);
  el.replaceChildren();
  append(el, [text]);
  el.className = `status ${text.length ? 'show' : ''} status-${kind}`;
  if (ms) statusTimer = setTimeout(() => status(workingText()), ms);
}

function workingText() {
  if (!working.size) return '';
  const names = [...working].map((id) => agents.find((a) => a.id === id)?.name ?? id);
  return [names.flatMap((n, i) => (i ? [', ', bdi(n)] : [bdi(n)])), ` ${names.length > 1 ? 'are' : 'is'} answering…`];
}

function explain(err) {
  if (isAgentWorldError(err)) return `${err.message} (${err.code})`;
  return err?.message ?? String(err);
}

function fail(err, what) {
  status(`${what}: ${explain(err)}`, 'error', 8000);
}

function setBusy(on) {
  busy = on;
  $('stop').disabled = !on;
  $('app').classList.toggle('busy', on);
  if (!on) working.clear();
  renderAgents(agents, working, agentHandlers);
  if (!on) status('');
}

// ---------------------------------------------------------------------------------------------
// Worlds

async function probeStorage() {
  try {
    await AgentWorld.list({ storage: 'indexeddb' });
    state.storage = 'indexeddb';
  } catch (err) {
    // This build has no IndexedDB storage yet (storage_unavailable), or the browser refuses it
    // (private mode, disabled storage): keep worlds in memory and say so.
    state.storage = 'memory';
    const note = $('storage-note');
    note.textContent = isAgentWorldError(err) && err.code === 'storage_unavailable'
      ? 'This build keeps worlds in memory only; they are lost on reload. Export a world to keep it.'
      : `IndexedDB is not available here (${explain(err)}): worlds are kept in memory only and lost on reload.`;
    note.hidden = false;
  }
}

async function listWorlds() {
  return AgentWorld.list(storageOpts());
}

async function refreshWorlds() {
  const worlds = await listWorlds();
  renderWorlds(worlds, world?.id);
  const none = !world;
  for (const id of ['edit-world', 'export-world', 'delete-world', 'new-chat', 'add-agent', 'input', 'send']) $(id).disabled = none;
  return worlds;
}

function detach() {
  for (const off of offs) off();
  offs = [];
  if (world) {
    world.stop();
    world.free();
  }
  world = null;
  agents = [];
  working.clear();
  setBusy(false);
  // The old world's chat goes with it: the next world's title must never show above it while
  // that world opens (its chat list and messages are read asynchronously).
  view.reset();
  $('chat-title').textContent = '';
  $('world-title').textContent = '';
}

function applyProviders(target = world) {
  const errors = [];
  for (const [provider, settings] of Object.entries(effectiveProviders())) {
    try {
      target.configureProvider(provider, settings);
    } catch (err) {
      errors.push(`${provider}: ${explain(err)}`);
    }
  }
  return errors;
}

/** Makes `handle` the open world: providers, event callbacks, sidebar, current chat. */
async function attach(handle, chatId = null) {
  detach();
  world = handle;
  applyProviders();
  // Tools live in memory only: every world opened gets the page's tools again, so the demo
  // world's Tess (and a world made before the tools existed, once an agent lists them) works.
  const toolErrors = registerDemoTools(world);
  if (toolErrors.length) status(`Some demo tools are not available: ${toolErrors.join(' · ')}`, 'error', 8000);
  offs.push(world.on('message', onMessage));
  offs.push(world.on('sse', onSse));
  offs.push(world.on('system', onSystem));
  offs.push(world.on('world', onWorldEvent));
  $('debug-panel').hidden = !state.debug;
  $('debug-list').replaceChildren();
  $('debug-count').textContent = '0';
  if (!world.currentChat()) await world.setSessionMode(true);
  // Reload keeps your place: the chat that was open, if it still exists.
  if (chatId && chatId !== world.currentChat()?.id && world.listChats().some((c) => c.id === chatId)) {
    quietAbortsUntil = Date.now() + 3000;
    await world.loadChat(chatId);
  }
  refreshAgents();
  refreshTitles();
  await refreshWorlds();
  await showCurrentChat();
}

async function openWorld(id, chatId = null) {
  try {
    await attach(await AgentWorld.open(id, worldOpts()), chatId);
  } catch (err) {
    fail(err, 'Could not open the world');
  }
}

const DEMO_AGENTS = [
  {
    name: 'Alice', model: 'mock-alice',
    systemPrompt: 'You are Alice, a friendly product planner. Answer in two or three sentences.',
  },
  {
    name: 'Bob', model: 'mock-bob',
    systemPrompt: [
      'You are Bob, a careful engineer. Point out one risk in each answer.',
      '',
      '# Script for the local mock LLM (remove with a real provider): show some reasoning.',
      'mock-reasoning: Check the risky part first: what could break, and who would notice?',
    ].join('\n'),
  },
  {
    name: 'Carol', model: 'mock-carol',
    systemPrompt: [
      'You are Carol, the coordinator. When a question needs a second opinion, hand it to a colleague with an @mention on its own line.',
      '',
      '# Script for the local mock LLM (remove these lines with a real provider):',
      'mock-reply: Good question. Let me bring in a second opinion.\\n@alice, could you take a closer look at this?',
      'mock-reply: Thanks, Alice, that settles it for me. **Over to you!** <world>pass</world>',
      'mock-reply: Noted; Alice and Bob have covered it. <world>pass</world>',
    ].join('\n'),
  },
  {
    name: 'Tess', model: 'mock-tess', tools: ['current_time', 'calculator', 'fetch_url'],
    systemPrompt: [
      'You are Tess, the assistant with tools: the time in any time zone, a calculator, and reading a web page (the user approves each fetch). Use a tool rather than guessing, and say what it returned.',
      '',
      '# Script for the local mock LLM (remove these lines with a real provider): call two tools, then answer with their results.',
      'mock-tool: current_time {"timeZone": "Europe/Paris"}',
      'mock-tool: calculator {"expression": "17 * 23"}',
      'mock-reply: I asked my tools rather than guessing: {results}',
    ].join('\n'),
  },
];

/** First visit with the demo server: a ready-made world whose agents talk through the mock. */
async function createDemoWorld() {
  const handle = await AgentWorld.create({
    name: 'Demo World', description: 'Four agents on the local mock LLM, one with tools', turnLimit: 5, ...worldOpts(),
  });
  applyProviders(handle);
  registerDemoTools(handle);
  for (const a of DEMO_AGENTS) await handle.addAgent({ ...a, provider: 'openai-compatible' });
  await attach(handle);
}

async function createWorld(form) {
  const name = form.name.value.trim();
  const description = form.description.value.trim();
  const turnLimit = Number(form.turnLimit.value) || undefined;
  const handle = await AgentWorld.create({ name, ...(description ? { description } : {}), turnLimit, ...worldOpts() });
  await attach(handle);
  status(['Created “', bdi(name), '”. Add an agent to start.'], 'ok', 4000);
}

async function deleteWorld() {
  if (!world) return;
  const info = world.info();
  if (!(await ask({ title: 'Delete this world?', text: ['“', bdi(info.name), '”, its agents and all its chats are deleted. This cannot be undone.'], ok: 'Delete' }))) return;
  detach();
  await AgentWorld.delete(info.id, storageOpts());
  dropNotes(info.id);
  const rest = await listWorlds();
  if (rest.length) await openWorld(rest[0].id);
  else await showNoWorld();
}

async function showNoWorld() {
  await refreshWorlds();
  view.reset();
  view.setAgents([]);
  renderAgents([], working, agentHandlers);
  renderChats([], null, chatHandlers);
  $('chat-title').textContent = 'No world open';
  $('world-title').textContent = '';
  view.root.append(h('div', { class: 'empty' },
    h('div', { class: 'empty-mark', 'aria-hidden': 'true' }, '◎'),
    h('h2', {}, 'Create a world'),
    h('p', {}, 'A world holds agents and chats. Create one, or import a world you exported.'),
    h('div', { class: 'suggestions' }, h('button', { type: 'button', class: 'suggestion', onclick: () => openWorldDialog(false) }, '+ New world'))));
}

async function exportWorld() {
  const json = await world.export();
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const name = exportName(world.id);
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  status(`Exported ${name} (API keys are never exported).`, 'ok', 4000);
}

/** `<worldId>-<YYYY-MM-DD>.json`, today's local date: backups of one world sort by date. */
export function exportName(id, now = new Date()) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${id}-${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}.json`;
}

async function importWorld(file) {
  const text = await file.text();
  try {
    await attach(await AgentWorld.import(text, worldOpts()));
    status(['Imported “', bdi(world.info().name), '”.'], 'ok', 4000);
  } catch (err) {
    if (isAgentWorldError(err) && err.code === 'world_exists') {
      status('A world with this id is already open here: delete it first, then import the file.', 'error', 8000);
    } else {
      fail(err, 'Could not import');
    }
  }
}

function refreshTitles() {
  if (!world) return;
  const info = world.info();
  const chat = world.currentChat();
  $('chat-title').replaceChildren(chat ? bdi(chat.name) : 'Session off');
  $('world-title').replaceChildren(bdi(info.name), ` · turn limit ${info.turnLimit}`);
  // The tab's title is plain text: no isolation possible, so the controls are removed.
  document.title = `${plainText(chat?.name ?? info.name)} · agent-world-wasm`;
}

// ---------------------------------------------------------------------------------------------
// Chats

let chatsTimer = 0;
function refreshChats() {
  // Coalesce the bursts of events (chat-saved after every message) into one repaint.
  if (chatsTimer) return;
  chatsTimer = requestAnimationFrame(() => {
    chatsTimer = 0;
    if (!world) return;
    savePlace(world.id, world.currentChat()?.id);
    renderChats(world.listChats(), world.currentChat()?.id, chatHandlers);
    refreshTitles();
  });
}

async function showCurrentChat() {
  view.reset();
  view.setAgents(agents);
  const chat = world.currentChat();
  refreshChats();
  if (!chat) return view.showEmpty(agents.length > 0);
  const page = await world.messages(chat.id, { limit: 200 });
  if (page.length === 200) {
    view.root.append(h('button', {
      type: 'button', class: 'small-btn load-earlier',
      onclick: (e) => loadEarlier(chat.id, page[0].messageId, e.currentTarget),
    }, 'Load earlier messages'));
  }
  for (const m of page) view.message(m);
  lastHuman = [...page].reverse().find((m) => m.sender.toLowerCase() === 'human')?.content ?? null;
  // The view's own notes of this chat (errors, "Stopped"): the engine does not store them.
  for (const n of loadNotes(world.id, chat.id)) {
    if (n.kind === 'error') view.error(n, { retry: retryLabel(n), after: n.after, restored: true });
    else if (n.kind === 'stopped') view.localNote(STOPPED, n.after);
    else if (n.kind === 'unanswered') view.unanswered(n);
  }
  // Tool calls waiting for your answer survive a reload: their cards get Approve / Deny again.
  if (can('pendingApprovals')) {
    for (const p of world.pendingApprovals()) view.approvalRequest(p);
  }
  view.showEmpty(agents.length > 0);
  view.scroll(true);
}

async function loadEarlier(chatId, before, button) {
  const older = await world.messages(chatId, { before, limit: 200 });
  const anchor = button.nextSibling;
  button.remove();
  const tmp = new ChatView(document.createElement('div'), {});
  tmp.setAgents(agents);
  for (const m of older) tmp.message(m);
  for (const el of [...tmp.root.children]) view.root.insertBefore(el, anchor);
  if (older.length === 200) {
    view.root.prepend(h('button', { type: 'button', class: 'small-btn load-earlier',
      onclick: (e) => loadEarlier(chatId, older[0].messageId, e.currentTarget) }, 'Load earlier messages'));
  }
}

const chatHandlers = {
  open: (id) => guard('Could not open the chat', async () => {
    if (id === world.currentChat()?.id) return closeSidebar();
    quietAbortsUntil = Date.now() + 3000;
    await world.loadChat(id);
    await showCurrentChat();
    closeSidebar();
  }),
  rename: (chat) => guard('Could not rename', async () => {
    const name = await ask({ title: 'Rename chat', input: chat.name, label: 'Chat name', ok: 'Rename' });
    if (name && name.trim()) await world.renameChat(chat.id, name.trim());
    refreshChats();
  }),
  remove: (chat) => guard('Could not delete the chat', async () => {
    if (!(await ask({ title: 'Delete this chat?', text: ['“', bdi(chat.name), `” and its ${chat.messageCount} messages are deleted.`], ok: 'Delete' }))) return;
    const wasCurrent = chat.id === world.currentChat()?.id;
    quietAbortsUntil = Date.now() + 3000;
    await world.deleteChat(chat.id);
    dropNotes(world.id, chat.id);
    if (!world.currentChat()) await world.newChat();
    if (wasCurrent || !world.currentChat()) await showCurrentChat();
    else refreshChats();
  }),
};

async function newChat() {
  quietAbortsUntil = Date.now() + 3000;
  await world.newChat();
  await showCurrentChat();
  closeSidebar();
  $('input').focus();
}

// ---------------------------------------------------------------------------------------------
// Agents

function refreshAgents() {
  agents = world ? world.agents() : [];
  setAgentOrder(agents.map((a) => a.id));
  view.setAgents(agents);
  renderAgents(agents, working, agentHandlers);
  if (world) view.showEmpty(agents.length > 0);
}

const agentHandlers = { edit: (a) => openAgentDialog(a) };
let editing = null;

function openAgentDialog(agent = null) {
  editing = agent;
  const f = $('agent-form');
  $('agent-dialog-title').replaceChildren(...(agent ? ['Edit ', bdi(agent.name)] : ['Add an agent']));
  f.name.value = agent?.name ?? '';
  f.provider.value = agent?.provider ?? 'openai-compatible';
  f.model.value = agent?.model ?? (state.demo ? 'mock-dana' : '');
  f.systemPrompt.value = agent?.systemPrompt ?? '';
  f.temperature.value = agent?.temperature ?? '';
  f.maxTokens.value = agent?.maxTokens ?? '';
  fillToolPicks(agent);
  $('agent-remove').hidden = !agent;
  $('agent-error').textContent = '';
  fillModelHints();
  $('agent-dialog').showModal();
  f.name.focus();
}

/** The tool checkboxes: the tools this page registered, and any the agent lists that it did
 * not (from another page or an import: its replies fail with tool_not_registered until it is
 * unticked here). */
function fillToolPicks(agent) {
  const offered = world ? world.tools() : [];
  const listed = agent?.tools ?? [];
  const names = [...offered.map((t) => t.name), ...listed.filter((n) => !offered.some((t) => t.name === n))];
  $('agent-tools-box').hidden = !names.length;
  $('agent-tools').replaceChildren(...names.map((name) => {
    const info = offered.find((t) => t.name === name);
    const id = `tool-pick-${name}`;
    return h('div', { class: 'tool-pick' },
      h('input', { type: 'checkbox', id, name: 'tools', value: name, checked: listed.includes(name) }),
      h('label', { for: id }, h('code', {}, plainText(name)),
        info ? ` ${info.needsApproval ? '(asks you first) ' : ''}` : ' (not available on this page)'),
      info ? h('div', { class: 'tool-pick-desc' }, info.description) : null);
  }));
}

/** The model field's suggestions, and the model picker filled from the provider's own list
 * (fetched once per provider when it is configured; Test connection in Settings fills it too). */
function fillModelHints() {
  const pid = $('agent-provider').value;
  const p = PROVIDERS.find((x) => x.id === pid);
  $('model-hints').replaceChildren(...(p?.models ?? []).map((m) => h('option', { value: m })));
  paintModelPicker(pid);
  const settings = effectiveProviders()[pid];
  if (!state.models[pid] && (settings || pid === 'ollama') && modelListRequest(pid, settings ?? {})) {
    listModels(pid, settings ?? {}, { timeoutMs: 5000 }).then(({ models }) => {
      state.models[pid] = models;
      if ($('agent-provider').value === pid) paintModelPicker(pid);
    }, () => {});
  }
}

function paintModelPicker(pid) {
  const models = state.models[pid] ?? [];
  const pick = $('agent-model-pick');
  pick.replaceChildren(h('option', { value: '' }, `${models.length} from the provider…`),
    ...models.map((m) => h('option', { value: m }, plainText(m))));
  $('agent-model-pick-box').hidden = !models.length;
}

async function saveAgent() {
  const f = $('agent-form');
  const num = (v) => (v.trim() === '' ? null : Number(v));
  const fields = {
    name: f.name.value.trim(),
    provider: f.provider.value,
    model: f.model.value.trim(),
    systemPrompt: f.systemPrompt.value.trim() ? f.systemPrompt.value : null,
    temperature: num(f.temperature.value),
    maxTokens: num(f.maxTokens.value),
  };
  const tools = [...$('agent-tools').querySelectorAll('input[type="checkbox"]:checked')].map((c) => c.value);
  if (editing) {
    // Tools are sent only when changed, so an edit of another field keeps them as they were.
    const before = editing.tools ?? [];
    if (tools.length !== before.length || tools.some((t, i) => t !== before[i])) fields.tools = tools;
    await world.updateAgent(editing.id, fields);
  } else {
    const create = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
    if (tools.length) create.tools = tools;
    await world.addAgent(create);
  }
  refreshAgents();
}

async function removeAgent() {
  if (!editing) return;
  const a = editing;
  $('agent-dialog').close();
  if (!(await ask({ title: ['Remove ', bdi(a.name), '?'], text: 'The agent leaves this world; the chats keep its messages.', ok: 'Remove' }))) return;
  await world.removeAgent(a.id);
  refreshAgents();
}

// ---------------------------------------------------------------------------------------------
// Conversation

/** The retry of an error: the same agent again when the engine can regenerate a failed reply
 * (§10), else, honestly labelled, your last message sent again to every agent. */
function retryLabel(e) {
  if (can('regenerate') && e.replyToMessageId && e.agentName) return { label: 'Retry', title: 'Ask the same agent again' };
  return lastHuman || e.kind === 'error'
    ? { label: 'Send again', title: 'Sends your last message again, to every agent it reaches (a new message)' }
    : null;
}

async function retry(e) {
  // A failed reply (§10): the message it answered, and the agent.
  if (can('regenerate') && e.replyToMessageId && e.agentName) {
    return guard('Could not retry', () => regenerate(e.replyToMessageId, { agent: e.agentName }));
  }
  if (lastHuman) return sendMessage(lastHuman);
  return undefined;
}

async function regenerate(messageId, options) {
  setBusy(true);
  try {
    await world.regenerate(messageId, options);
  } finally {
    world.idle().then(() => setBusy(false), () => setBusy(false));
  }
}

async function deleteMessage(m) {
  if (!(await ask({ title: 'Delete this message?', text: 'It leaves the chat and every agent’s memory.', ok: 'Delete' }))) return;
  await world.deleteMessage(m.messageId);
  await showCurrentChat();
}

/** Edit and resend (§10): the composer takes the message; sending replaces it and everything
 * after it. Escape cancels. */
let editingId = null;
function startEdit(m) {
  editingId = m.messageId;
  const input = $('input');
  input.value = m.content;
  autosize();
  $('composer').classList.add('editing');
  $('composer-hint').textContent = 'Editing your message: Send replaces it and everything after it · Esc cancels';
  input.focus();
}

function endEdit() {
  editingId = null;
  $('composer').classList.remove('editing');
  $('composer-hint').textContent = HINT;
  warnUnaddressed();
}

/** Before sending: text that mentions agents but none at a line start reaches nobody (the
 * engine would say `unanswered`), so the hint says so while it is typed. */
function warnUnaddressed() {
  const hint = $('composer-hint');
  if (editingId) return;
  const { all, lineStart } = mentionsOf($('input').value);
  if (all.length && !lineStart.length) {
    const id = all[0];
    const name = agents.find((a) => a.id === id)?.name ?? id;
    hint.classList.add('warn');
    hint.replaceChildren();
    append(hint, [`Nobody will answer: @${id} is mentioned mid-line. Start a line with @${id} to ask `, bdi(name), '.']);
  } else if (hint.classList.contains('warn')) {
    hint.classList.remove('warn');
    hint.textContent = HINT;
  }
}

async function sendMessage(text) {
  if (!world || !text.trim()) return;
  if (editingId) {
    const id = editingId;
    endEdit();
    setBusy(true);
    try {
      await world.editMessage(id, text);
      await showCurrentChat();
    } catch (err) {
      fail(err, 'Not sent');
    }
    world.idle().then(() => setBusy(false), () => setBusy(false));
    return;
  }
  lastHuman = text;
  setBusy(true);
  try {
    await world.send(text);
  } catch (err) {
    fail(err, 'Not sent');
  }
  world.idle().then(() => setBusy(false), () => setBusy(false));
}

function onMessage(m) {
  const chat = world?.currentChat();
  if (chat && m.chatId && m.chatId !== chat.id) return;
  view.message(m);
  refreshChats();
}

function onSse(e) {
  view.sse(e);
  if (e.type === 'start') {
    working.add(e.agentName);
    if (!busy) setBusy(true);
  } else if (e.type === 'end' || e.type === 'error') {
    working.delete(e.agentName);
  } else {
    return;
  }
  renderAgents(agents, working, agentHandlers);
  status(workingText());
}

function onSystem(e) {
  switch (e.type) {
    case 'error': {
      if (e.code === 'llm_aborted' && Date.now() < quietAbortsUntil) return;
      const chat = world?.currentChat();
      const after = view.lastMessageId();
      view.error(e, { retry: retryLabel(e) });
      // Kept with the chat (localStorage), so a reload shows it where it happened.
      if (chat) {
        addNote(world.id, chat.id, {
          kind: 'error', after, at: Date.now(), code: String(e.code), message: String(e.message),
          ...(e.agentName ? { agentName: String(e.agentName) } : {}), ...(e.messageId ? { messageId: String(e.messageId) } : {}),
          ...(e.replyToMessageId ? { replyToMessageId: String(e.replyToMessageId) } : {}),
        });
      }
      break;
    }
    case 'unanswered': {
      // Shown after the message's own event (the engine emits this one first).
      queueMicrotask(() => view.unanswered(e));
      const chat = world?.currentChat();
      if (chat) {
        addNote(world.id, chat.id, {
          kind: 'unanswered', after: String(e.messageId), at: Date.now(), messageId: String(e.messageId),
          reason: String(e.reason), mentions: Array.isArray(e.mentions) ? e.mentions.map(String) : [],
        });
      }
      break;
    }
    case 'approval-request':
      view.approvalRequest(e);
      status([bdi(agents.find((a) => a.id === e.agentName)?.name ?? e.agentName), ' waits for your approval to run ', bdi(e.toolName), '.'], 'info', 6000);
      break;
    case 'approval-resolved':
      view.approvalResolved(e);
      break;
    case 'message-replaced':
      // §10: a regenerated reply takes the old one's place: repaint once the work is done.
      if (busy) repaintWhenIdle = true;
      else guard('Could not show the chat', showCurrentChat);
      break;
    case 'debug':
      addDebug(e, new Map(agents.map((a) => [a.id, a])));
      break;
    case 'chat-title-updated':
    case 'chat-saved':
    case 'chat-reused':
    case 'new-chat-created':
    case 'chat-loaded':
    case 'chat-deleted':
      refreshChats();
      break;
    default:
  }
}

function onWorldEvent(e) {
  if (e.type === 'idle') {
    setBusy(false);
    if (repaintWhenIdle) {
      repaintWhenIdle = false;
      guard('Could not show the chat', showCurrentChat);
    }
  } else if (e.type.startsWith('agent-')) refreshAgents();
  else if (e.type === 'world-updated') refreshTitles();
  else if (e.type === 'external-change') onExternalChange();
}

/** Another tab (or worker) wrote to this world and the engine reloaded its view: show it. A
 * reply streaming in this tab is not wiped mid-stream: the chat is repainted once idle. */
let repaintWhenIdle = false;
function onExternalChange() {
  refreshAgents();
  refreshChats();
  if (busy) {
    repaintWhenIdle = true;
    return;
  }
  guard('Could not show the chat', showCurrentChat);
}

const STOPPED = 'Stopped. The agents’ work in progress was cancelled.';
const HINT = 'Enter sends · Shift+Enter adds a line · @ picks an agent';

function stop() {
  if (!world) return;
  quietAbortsUntil = Date.now() + 3000;
  world.stop();
  const after = view.lastMessageId();
  view.localNote(STOPPED);
  const chat = world.currentChat();
  if (chat) addNote(world.id, chat.id, { kind: 'stopped', after, at: Date.now() });
  setBusy(false);
  $('input').focus();
}

/** Approve or deny a waiting tool call; the reply resumes (SSE `start` again, same bubble).
 * Returns false when the answer failed (answered in another tab, cancelled): the card says so. */
async function answerApproval(approvalId, approve) {
  if (!world) return false;
  try {
    if (approve) await world.approve(approvalId);
    else await world.deny(approvalId);
    return true;
  } catch (err) {
    if (isAgentWorldError(err) && err.code === 'approval_not_found') {
      view.approvalResolved({ approvalId, outcome: 'gone' });
      status('That approval was already answered or cancelled (perhaps in another tab).', 'error', 6000);
      return true;
    }
    fail(err, approve ? 'Could not approve' : 'Could not deny');
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Settings

/** The settings being edited, per provider (memory only until Save): switching the provider
 * picker keeps what was typed for the others. Dropped when the dialog closes. */
let draft = {};

/** The provider picker: the providers with settings first marked "✓". */
function fillProviderPicker(selected) {
  $('settings-provider').replaceChildren(...PROVIDERS.map((p) => h('option', {
    value: p.id, selected: p.id === selected,
  }, `${p.label}${Object.keys(draft[p.id] ?? {}).length ? ' ✓' : ''}`)));
}

/** The fields of the picked provider only, with Test connection. */
function buildProviderFields() {
  const box = $('provider-fields');
  const pid = $('settings-provider').value;
  const p = PROVIDERS.find((x) => x.id === pid);
  const effective = effectiveProviders();
  box.replaceChildren(h('div', { class: 'provider', 'data-provider': p.id },
    h('div', { class: 'provider-inputs' }, p.fields.map((field) => {
      const id = `pf-${p.id}-${field}`;
      const secret = field === 'apiKey';
      const placeholder = p.id === 'openai-compatible' && field === 'baseUrl' && state.demo
        ? effective[p.id].baseUrl : field === 'apiKey' && (p.id === 'openai-compatible' || p.id === 'ollama') ? 'optional' : '';
      const input = h('input', {
        id, 'data-provider': p.id, 'data-field': field, type: secret ? 'password' : 'text',
        placeholder, autocomplete: 'off', spellcheck: 'false',
      });
      // The property, never the `value` attribute: an attribute is part of the page's HTML
      // (outerHTML, a saved page, anything that serialises the DOM), and a key must not be.
      input.value = draft[p.id]?.[field] ?? '';
      input.addEventListener('input', () => {
        const v = input.value.trim();
        if (v) (draft[p.id] ??= {})[field] = v;
        else if (draft[p.id]) delete draft[p.id][field];
        $('test-result').replaceChildren();
      });
      return h('div', { class: 'pf' }, h('label', { for: id }, FIELD_LABELS[field]), input);
    }))));
  const testable = modelListRequest(p.id, {}) !== null;
  $('test-connection').hidden = !testable;
  $('test-result').replaceChildren(testable ? '' : 'Azure lists deployments only through its management API: send a message to check the settings.');
  $('test-result').className = 'test-result';
}

/** The settings `provider` would use: what is typed (not yet saved), else the demo's default. */
function draftSettings(provider) {
  const typed = { ...(draft[provider] ?? {}) };
  if (provider === 'openai-compatible' && !typed.baseUrl && state.demo) typed.baseUrl = effectiveProviders()[provider]?.baseUrl;
  return typed;
}

async function testConnection() {
  const provider = $('settings-provider').value;
  const out = $('test-result');
  const button = $('test-connection');
  out.className = 'test-result';
  out.replaceChildren('Testing…');
  button.disabled = true;
  try {
    const { models } = await listModels(provider, draftSettings(provider));
    state.models[provider] = models;
    out.className = 'test-result ok';
    out.replaceChildren();
    append(out, [`Connected: ${models.length} model${models.length === 1 ? '' : 's'}`,
      models.length ? [': ', bdi(models.slice(0, 6).join(', ')), models.length > 6 ? ', …' : ''] : '',
      '. Pick one when you add or edit an agent.']);
  } catch (err) {
    out.className = 'test-result bad';
    out.replaceChildren(`Failed: ${err.message}`);
  } finally {
    button.disabled = false;
  }
}

function openSettings() {
  draft = structuredClone(state.providers);
  const first = PROVIDERS.find((p) => draft[p.id])?.id ?? 'openai-compatible';
  fillProviderPicker(first);
  buildProviderFields();
  $('remember-keys').checked = state.remember;
  $('debug-toggle').checked = state.debug;
  $('settings-error').textContent = '';
  $('settings-dialog').showModal();
}

async function saveSettings() {
  setProviders(draft);
  state.remember = $('remember-keys').checked;
  const debugChanged = state.debug !== $('debug-toggle').checked;
  state.debug = $('debug-toggle').checked;
  persistSettings();
  if (world && debugChanged) {
    // Debug events are chosen when a world is opened: reopen it.
    const id = world.id;
    const chatId = world.currentChat()?.id;
    detach();
    await openWorld(id, chatId);
  }
  const errors = world ? applyProviders() : [];
  if (errors.length) {
    $('settings-error').textContent = errors.join(' · ');
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Theme

/** The theme: the system's (prefers-color-scheme) until the toggle picks one, remembered. */
const darkQuery = matchMedia('(prefers-color-scheme: dark)');
function applyTheme() {
  const chosen = loadTheme();
  const dark = chosen ? chosen === 'dark' : darkQuery.matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const t = $('theme-toggle');
  t.setAttribute('aria-pressed', String(dark));
  t.title = dark ? 'Dark mode is on' : 'Dark mode is off';
}

function toggleTheme() {
  saveTheme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark');
  applyTheme();
}

// ---------------------------------------------------------------------------------------------
// Dialogs and layout

/** A confirm or prompt dialog; `title` and `text` are strings or parts (names in `bdi()`). */
function ask({ title, text = '', input = null, label = 'Name', ok = 'OK' }) {
  const dlg = $('ask-dialog');
  $('ask-title').replaceChildren();
  append($('ask-title'), [title]);
  $('ask-text').replaceChildren();
  append($('ask-text'), [text]);
  $('ask-text').hidden = !text.length;
  $('ask-label').textContent = label;
  $('ask-label').hidden = input === null;
  $('ask-input').hidden = input === null;
  $('ask-input').value = input ?? '';
  $('ask-ok').textContent = ok;
  $('ask-ok').classList.toggle('danger-fill', ok === 'Delete' || ok === 'Remove');
  dlg.returnValue = '';
  dlg.showModal();
  if (input !== null) $('ask-input').select();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      if (dlg.returnValue !== 'ok') resolve(input === null ? false : null);
      else resolve(input === null ? true : $('ask-input').value);
    }, { once: true });
  });
}

/** The world dialog: create a world, or (editWorld) change the open one's settings. */
let editingWorld = false;
function openWorldDialog(edit = false) {
  const f = $('world-form');
  f.reset();
  editingWorld = edit && !!world;
  if (editingWorld) {
    const info = world.info();
    f.name.value = info.name;
    f.description.value = info.description ?? '';
    f.turnLimit.value = String(info.turnLimit);
  }
  $('world-dialog-title').textContent = editingWorld ? 'World settings' : 'Create a world';
  $('world-save').textContent = editingWorld ? 'Save' : 'Create';
  $('world-error').textContent = '';
  $('world-dialog').showModal();
  f.name.focus();
}

async function saveWorld() {
  const f = $('world-form');
  if (!editingWorld) return createWorld(f);
  const description = f.description.value.trim();
  await world.update({
    name: f.name.value.trim(),
    description: description || null,
    turnLimit: Number(f.turnLimit.value) || undefined,
  });
  refreshTitles();
  await refreshWorlds();
  return true;
}

function openSidebar() {
  $('app').classList.add('sidebar-open');
  $('scrim').hidden = false;
  $('open-sidebar').setAttribute('aria-expanded', 'true');
}

function closeSidebar() {
  $('app').classList.remove('sidebar-open');
  $('scrim').hidden = true;
  $('open-sidebar').setAttribute('aria-expanded', 'false');
}

function autosize() {
  const t = $('input');
  t.style.height = 'auto';
  // scrollHeight is the content and padding; under box-sizing: border-box the height also
  // holds the borders, without which the box is 2 px short and shows a scrollbar.
  const borders = t.offsetHeight - t.clientHeight;
  t.style.height = `${Math.min(t.scrollHeight + borders, 200)}px`;
}

/** Runs an async UI action, reporting its failure in the status line. */
async function guard(what, fn) {
  try {
    return await fn();
  } catch (err) {
    fail(err, what);
    return undefined;
  }
}

/** A dialog whose form submits with its own handler, closing only on success. */
function wireDialog(dialogId, formId, onSubmit, errorId) {
  const dlg = $(dialogId);
  const form = $(formId);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const submitter = e.submitter;
    if (!onSubmit) {
      dlg.close(submitter?.value ?? 'ok');
      return;
    }
    try {
      if ((await onSubmit()) !== false) dlg.close('ok');
    } catch (err) {
      $(errorId).textContent = explain(err);
    }
  });
  for (const b of form.querySelectorAll('[data-close]')) b.addEventListener('click', () => dlg.close(''));
}

function wire() {
  const input = $('input');
  const narrow = matchMedia('(max-width: 760px)');
  const placeholder = () => {
    input.placeholder = narrow.matches ? 'Message, or @mention…' : 'Message everyone, or @mention an agent…';
  };
  narrow.addEventListener('change', placeholder);
  placeholder();
  const mentions = attachMentions(input, $('mention-list'), () => agents);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !mentions.isOpen()) {
      e.preventDefault();
      $('composer').requestSubmit();
    }
  });
  input.addEventListener('input', autosize);
  input.addEventListener('input', warnUnaddressed);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && editingId && !mentions.isOpen()) {
      endEdit();
      input.value = '';
      autosize();
    }
  });
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    input.value = '';
    autosize();
    warnUnaddressed();
    sendMessage(text);
  });
  $('stop').addEventListener('click', stop);
  $('new-chat').addEventListener('click', () => guard('Could not start a chat', newChat));
  $('add-agent').addEventListener('click', () => openAgentDialog());
  $('agent-provider').replaceChildren(...PROVIDERS.map((p) => h('option', { value: p.id }, `${p.label} (${p.id})`)));
  $('agent-provider').addEventListener('change', fillModelHints);
  $('agent-model-pick').addEventListener('change', (e) => {
    if (e.target.value) $('agent-model').value = e.target.value;
  });
  $('settings-provider').addEventListener('change', buildProviderFields);
  $('test-connection').addEventListener('click', testConnection);
  $('theme-toggle').addEventListener('click', toggleTheme);
  darkQuery.addEventListener('change', applyTheme);
  $('agent-remove').addEventListener('click', () => guard('Could not remove the agent', removeAgent));
  $('new-world').addEventListener('click', () => openWorldDialog(false));
  $('edit-world').addEventListener('click', () => openWorldDialog(true));
  $('delete-world').addEventListener('click', () => guard('Could not delete the world', deleteWorld));
  $('export-world').addEventListener('click', () => guard('Could not export', exportWorld));
  $('import-file').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) await guard('Could not import', () => importWorld(file));
  });
  $('world-select').addEventListener('change', (e) => e.target.value && openWorld(e.target.value));
  $('open-settings').addEventListener('click', openSettings);
  // Unticking "remember" forgets the stored settings at once, not only on Save.
  $('remember-keys').addEventListener('change', (e) => {
    if (e.target.checked) return;
    state.remember = false;
    persistSettings();
  });
  // Closed (saved or cancelled): drop the inputs that held the keys.
  $('settings-dialog').addEventListener('close', () => {
    $('provider-fields').replaceChildren();
    draft = {};
  });
  $('open-sidebar').addEventListener('click', openSidebar);
  $('close-sidebar').addEventListener('click', closeSidebar);
  $('scrim').addEventListener('click', closeSidebar);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && $('app').classList.contains('sidebar-open')) closeSidebar();
  });
  wireDialog('agent-dialog', 'agent-form', saveAgent, 'agent-error');
  wireDialog('world-dialog', 'world-form', saveWorld, 'world-error');
  wireDialog('settings-dialog', 'settings-form', saveSettings, 'settings-error');
  wireDialog('ask-dialog', 'ask-form', null);
}

async function demoConfig() {
  try {
    const res = await fetch('/demo-config.json', { cache: 'no-store' });
    if (!res.ok) return null;
    const cfg = await res.json();
    return typeof cfg?.mockBaseUrl === 'string' ? cfg : null;
  } catch {
    return null;
  }
}

async function main() {
  applyTheme();
  wire();
  status('Loading the engine…');
  await init();
  $('version').textContent = version();
  loadRemembered();
  state.demo = await demoConfig();
  await probeStorage();
  const worlds = await listWorlds();
  // Reload keeps your place: the world and chat open last, else the first world.
  const place = loadPlace();
  const last = worlds.find((w) => w.id === place?.worldId);
  if (last) await openWorld(last.id, place.chatId);
  else if (worlds.length) await openWorld(worlds[0].id);
  else if (state.demo) await createDemoWorld();
  else await showNoWorld();
  status('');
  $('app').dataset.ready = 'true';
  // Ready to type, except where focusing would pop up a touch keyboard over the page.
  if (!matchMedia('(pointer: coarse)').matches) $('input').focus();
}

main().catch((err) => {
  status(`The demo could not start: ${explain(err)}`, 'error');
});
