// The app's state that is not in the engine: which storage works, provider settings (keys kept
// in memory unless the user asks to remember them), the debug switch, and the demo config.

export const PROVIDERS = [
  { id: 'openai-compatible', label: 'OpenAI-compatible', fields: ['baseUrl', 'apiKey'],
    models: ['mock-alice', 'mock-bob', 'mock-carol', 'llama-3.1-8b-instruct'] },
  { id: 'openai', label: 'OpenAI', fields: ['apiKey', 'baseUrl'], models: ['gpt-4o-mini', 'gpt-4.1-mini'] },
  { id: 'anthropic', label: 'Anthropic', fields: ['apiKey', 'baseUrl'], models: ['claude-3-5-haiku-latest', 'claude-sonnet-4-0'] },
  { id: 'google', label: 'Google Gemini', fields: ['apiKey', 'baseUrl'], models: ['gemini-2.0-flash', 'gemini-2.5-flash'] },
  { id: 'xai', label: 'xAI', fields: ['apiKey', 'baseUrl'], models: ['grok-3-mini'] },
  { id: 'azure', label: 'Azure OpenAI', fields: ['apiKey', 'endpoint', 'deployment', 'apiVersion'], models: ['gpt-4o-mini'] },
  { id: 'ollama', label: 'Ollama', fields: ['baseUrl'], models: ['llama3.2', 'qwen2.5'] },
];

export const FIELD_LABELS = {
  apiKey: 'API key', baseUrl: 'Base URL', endpoint: 'Endpoint', deployment: 'Deployment',
  apiVersion: 'API version',
};

const KEY = 'agent-world-demo.providers';

export const state = {
  /** 'indexeddb' or 'memory' once probed. */
  storage: 'memory',
  debug: false,
  remember: false,
  /** provider id → {apiKey?, baseUrl?, …} */
  providers: {},
  /** {mockBaseUrl} from /demo-config.json, or null on a plain static host. */
  demo: null,
  /** provider id → model ids its list endpoint gave (Test connection, the agent dialog). */
  models: {},
};

/** Loads remembered provider settings (only present when the user ticked "remember"). */
export function loadRemembered() {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return;
    const saved = JSON.parse(raw);
    if (saved && typeof saved === 'object' && saved.providers) {
      state.providers = sanitize(saved.providers);
      state.remember = true;
      state.debug = saved.debug === true;
    }
  } catch {
    // A broken entry is ignored (and never logged: it may hold keys).
  }
}

function sanitize(providers) {
  const out = {};
  for (const p of PROVIDERS) {
    const src = providers[p.id];
    if (!src || typeof src !== 'object') continue;
    const clean = {};
    for (const f of p.fields) if (typeof src[f] === 'string' && src[f].trim()) clean[f] = src[f].trim();
    if (Object.keys(clean).length) out[p.id] = clean;
  }
  return out;
}

/** Stores the settings when "remember" is on; removes them when it is off. */
export function persistSettings() {
  try {
    if (state.remember) {
      localStorage.setItem(KEY, JSON.stringify({ providers: state.providers, debug: state.debug }));
    } else {
      localStorage.removeItem(KEY);
    }
  } catch {
    // Storage may be disabled (private mode): the settings then live for this tab only.
  }
}

export function setProviders(providers) {
  state.providers = sanitize(providers);
}

/** The settings to hand to configureProvider, with the demo's mock as the compatible default. */
export function effectiveProviders() {
  const out = structuredClone(state.providers);
  if (state.demo && !out['openai-compatible']?.baseUrl) {
    out['openai-compatible'] = { ...out['openai-compatible'], baseUrl: `${state.demo.mockBaseUrl}/compat/v1` };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The view's own memory in localStorage (no secrets): where you were, the notes of each chat,
// the colour theme.

const PLACE = 'agent-world-demo.place';
const NOTES = 'agent-world-demo.notes';
const THEME = 'agent-world-demo.theme';
/** Notes kept per chat (the newest). */
const NOTES_PER_CHAT = 50;

function readJson(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key) ?? 'null');
    return v ?? fallback;
  } catch {
    return fallback;
  }
}

function writeJson(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage disabled or full: the view simply forgets.
  }
}

/** The world and chat open last: {worldId, chatId} or null. */
export function loadPlace() {
  const p = readJson(PLACE, null);
  return p && typeof p.worldId === 'string' ? { worldId: p.worldId, chatId: typeof p.chatId === 'string' ? p.chatId : null } : null;
}

export function savePlace(worldId, chatId) {
  writeJson(PLACE, worldId ? { worldId, chatId: chatId ?? null } : null);
}

const notesKey = (worldId, chatId) => `${worldId}\u0000${chatId}`;

/**
 * The view's notes of a chat (errors, "Stopped"), which the engine does not store: each is
 * {kind: 'error'|'stopped', after: messageId|null, at, code?, message?, agentName?}, shown
 * after the message `after` (the last one on screen when it happened).
 */
export function loadNotes(worldId, chatId) {
  const all = readJson(NOTES, {});
  const list = all[notesKey(worldId, chatId)];
  return Array.isArray(list) ? list.filter((n) => n && typeof n.kind === 'string') : [];
}

export function addNote(worldId, chatId, note) {
  if (!worldId || !chatId) return;
  const all = readJson(NOTES, {});
  const key = notesKey(worldId, chatId);
  all[key] = [...(Array.isArray(all[key]) ? all[key] : []), note].slice(-NOTES_PER_CHAT);
  writeJson(NOTES, all);
}

/** Forgets the notes of one chat, or of every chat of the world when `chatId` is null. */
export function dropNotes(worldId, chatId = null) {
  const all = readJson(NOTES, {});
  for (const key of Object.keys(all)) {
    if (chatId === null ? key.startsWith(`${worldId}\u0000`) : key === notesKey(worldId, chatId)) delete all[key];
  }
  writeJson(NOTES, Object.keys(all).length ? all : null);
}

/** 'light', 'dark', or null (follow the system). */
export function loadTheme() {
  const t = readJson(THEME, null);
  return t === 'light' || t === 'dark' ? t : null;
}

export function saveTheme(theme) {
  writeJson(THEME, theme);
}
