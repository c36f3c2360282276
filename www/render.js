// Rendering: the message list (live streaming bubbles, notices, inline errors, message
// actions, the "new messages" pill), and the sidebar lists (chats, agents, worlds). Model text
// goes through markdown.js only.
import { $, append, avatar, bdi, colourIndex, h, plainText, replaceChildren } from './dom.js';
import { RENDER_LIMIT, copyButton, formatSize, renderInto } from './markdown.js';

const HUMAN = 'human';
/** While a reply streams, its markdown is rendered again at most this often (and once per
 * animation frame at most): smooth, and cheap even for long replies. */
const STREAM_RENDER_MS = 80;

const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/**
 * The conversation pane. One bubble per messageId: the stream and the final message share it.
 * `actions` says which message actions the engine offers (feature-detected by app.js):
 * {copy: true, regenerate?, edit?, remove?} → handlers (message) => void.
 */
export class ChatView {
  constructor(root, { onRetry, onSuggest, onAddAgent, onApproval = null, actions = {}, pill = null }) {
    this.root = root;
    /** (approvalId, approve: boolean) => Promise: answers an approval (world.approve / deny). */
    this.onApproval = onApproval;
    this.onRetry = onRetry;
    this.onSuggest = onSuggest;
    this.onAddAgent = onAddAgent;
    this.actions = actions;
    this.pill = pill;
    this.agents = new Map();
    if (pill) {
      pill.addEventListener('click', () => {
        this.scroll(true);
        this.hidePill();
      });
      root.addEventListener('scroll', () => {
        if (this.atBottom()) this.hidePill();
      }, { passive: true });
    }
    this.reset();
  }

  reset() {
    /** messageId → {el, body, text, rendered, reasoning, streaming, timer} */
    for (const b of this.bubbles?.values() ?? []) this.cancelRender(b);
    this.bubbles = new Map();
    this.root.replaceChildren();
    this.empty = null;
    this.hidePill();
  }

  setAgents(list) {
    this.agents = new Map(list.map((a) => [a.id, a]));
  }

  knownIds() {
    return new Set(this.agents.keys());
  }

  /** The empty state: what the demo can do, with a few prompts to try. */
  showEmpty(hasAgents) {
    if (this.bubbles.size || this.root.querySelector('.msg, .inline-error, .notice')) return;
    this.root.querySelector('.empty')?.remove();
    const names = [...this.agents.values()].flatMap((a, i) => (i ? [', ', bdi(a.name)] : [bdi(a.name)]));
    // An agent with the demo's time and calculator tools (Tess) gets a question that uses them.
    const toolUser = [...this.agents.values()].find((a) => a.tools?.includes('current_time') && a.tools.includes('calculator'));
    const tries = hasAgents
      ? [
          'Hello everyone! What should we build today?',
          `@${[...this.agents.keys()][0]} what do you think?`,
          toolUser ? `@${toolUser.id} what time is it in Paris, and what is 17 × 23?` : null,
        ].filter(Boolean)
      : [];
    this.empty = h('div', { class: 'empty' },
      h('div', { class: 'empty-mark', 'aria-hidden': 'true' }, '◎'),
      h('h2', {}, hasAgents ? 'Say hello to the agents' : 'No agents yet'),
      h('p', {}, hasAgents
        ? [names, ' answer a message to everyone; an @mention at the start of a line picks who answers. Agents hand over to each other with mentions, and the turn limit stops loops.']
        : 'An agent is a name, a provider, a model and a system prompt. Add one and start talking.'),
      tries.length ? h('div', { class: 'suggestions' }, tries.map((t) =>
        h('button', { type: 'button', class: 'suggestion', onclick: () => this.onSuggest(t) }, t))) : null,
      !hasAgents && this.onAddAgent ? h('div', { class: 'suggestions' },
        h('button', { type: 'button', class: 'suggestion', onclick: () => this.onAddAgent() }, '+ Add an agent')) : null);
    this.root.append(this.empty);
  }

  clearEmpty() {
    this.root.querySelector('.empty')?.remove();
    this.empty = null;
  }

  atBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 80;
  }

  scroll(stick) {
    if (stick) this.root.scrollTop = this.root.scrollHeight;
  }

  /** After new content: follow it when the reader was at the bottom, else offer the pill. */
  follow(stick) {
    if (stick) {
      this.scroll(true);
      this.hidePill();
    } else if (this.pill && this.root.scrollHeight > this.root.clientHeight) {
      this.pill.hidden = false;
    }
  }

  hidePill() {
    if (this.pill) this.pill.hidden = true;
  }

  /** The id of the last message on screen (where a note is placed). */
  lastMessageId() {
    const els = this.root.querySelectorAll('[data-message-id]');
    return els.length ? els[els.length - 1].dataset.messageId : null;
  }

  /** A bubble shell for `sender`. */
  makeBubble(messageId, sender, createdAt) {
    const agent = this.agents.get(sender);
    const isHuman = sender.toLowerCase() === HUMAN;
    const name = isHuman ? 'You' : agent?.name ?? sender;
    const body = h('div', { class: 'body' });
    const meta = h('div', { class: 'meta' },
      bdi(name, { class: 'who' }),
      createdAt ? h('time', { datetime: new Date(createdAt).toISOString() }, time(createdAt)) : null);
    const bubble = h('div', { class: 'bubble' }, meta, body);
    const el = h('article', {
      class: `msg ${isHuman ? 'from-human' : `from-agent hue-${colourIndex(sender)}`}`,
      'data-message-id': messageId, 'data-sender': sender,
      'aria-label': `${plainText(name)} says`,
    }, isHuman ? null : avatar(sender, name), h('div', { class: 'msg-col' }, bubble));
    const b = { el, body, meta, bubble, text: '', rendered: null, reasoning: null, streaming: false, timer: 0, sender, name, tools: null, cards: new Map() };
    this.bubbles.set(messageId, b);
    return b;
  }

  insert(el) {
    this.clearEmpty();
    const stick = this.atBottom();
    this.root.append(el);
    this.follow(stick);
  }

  cancelRender(b) {
    if (b.timer) {
      clearTimeout(b.timer);
      cancelAnimationFrame(b.timer);
    }
    b.timer = 0;
  }

  /** Streaming: render the markdown of what has come so far, throttled. */
  scheduleRender(b) {
    if (b.timer) return;
    const wait = Math.max(0, (b.lastRender ?? 0) + STREAM_RENDER_MS - performance.now());
    const frame = () => {
      b.timer = requestAnimationFrame(() => {
        b.timer = 0;
        if (!b.streaming) return;
        const stick = this.atBottom();
        this.renderBody(b, b.text);
        b.lastRender = performance.now();
        this.follow(stick);
      });
    };
    if (wait > 0) b.timer = setTimeout(frame, wait);
    else frame();
  }

  renderBody(b, text) {
    if (b.rendered === text) return;
    renderInto(b.body, text, { knownIds: this.knownIds() });
    b.rendered = text;
  }

  /** SSE events: start / chunk / reasoning / end / error. */
  sse(e) {
    let b = this.bubbles.get(e.messageId);
    const stick = this.atBottom();
    if (e.type === 'start') {
      if (!b) {
        b = this.makeBubble(e.messageId, e.agentName, Date.now());
        this.insert(b.el);
      }
      b.streaming = true;
      b.el.classList.remove('awaiting');
      b.el.classList.add('streaming');
      b.el.setAttribute('aria-busy', 'true');
      return;
    }
    if (!b) return;
    if (e.type === 'tool-call') {
      this.toolCard(b, e).update({ args: e.args, state: 'running' });
    } else if (e.type === 'tool-result') {
      this.toolCard(b, e).update(outcome(e));
    } else if (e.type === 'chunk' && e.content) {
      b.text += e.content;
      b.el.dataset.length = String(b.text.length);
      this.scheduleRender(b);
    } else if (e.type === 'reasoning' && e.content) {
      if (!b.reasoning) {
        const text = h('div', { class: 'reasoning-text' });
        const det = h('details', { class: 'reasoning' }, h('summary', {}, 'Reasoning'), text);
        b.bubble.insertBefore(det, b.body);
        b.reasoning = text;
        b.reasoningText = '';
      }
      if (b.reasoningText.length < RENDER_LIMIT) {
        b.reasoningText += e.content;
        b.reasoning.append(document.createTextNode(e.content));
      }
    } else if (e.type === 'end' || e.type === 'error') {
      b.streaming = false;
      this.cancelRender(b);
      this.renderBody(b, b.text);
      b.el.classList.remove('streaming');
      b.el.removeAttribute('aria-busy');
      if (e.type === 'error') {
        if (!b.text.trim() && !b.cards?.size) {
          // Nothing was shown: the inline error (system event) says what happened.
          b.el.remove();
          this.bubbles.delete(e.messageId);
        } else {
          b.el.classList.add('interrupted');
        }
      }
    }
    this.follow(stick);
  }

  /** A published message (human, agent reply, or an engine notice). */
  message(m) {
    const stick = this.atBottom();
    let b = this.bubbles.get(m.messageId);
    if (m.kind !== 'message' && m.kind !== 'interrupted') {
      b?.el.remove();
      this.notice(m);
      this.follow(stick);
      return;
    }
    if (!b) {
      b = this.makeBubble(m.messageId, m.sender, m.createdAt);
      this.insert(b.el);
    }
    b.streaming = false;
    this.cancelRender(b);
    b.text = m.content;
    b.message = m;
    b.el.classList.remove('streaming');
    b.el.removeAttribute('aria-busy');
    b.el.classList.add('final');
    b.el.dataset.length = String(m.content.length);
    if (m.kind === 'interrupted') {
      b.el.classList.add('interrupted');
      if (!b.meta.querySelector('.tag')) b.meta.append(h('span', { class: 'tag' }, 'interrupted'));
    }
    // The stream already rendered this very text: nothing moves when the reply is final.
    this.renderBody(b, m.content);
    // The published calls are the record: they fill (or, after a reload, make) the cards.
    for (const call of m.toolCalls ?? []) this.toolCard(b, call).update({ args: call.args, ...outcome(call) });
    b.el.classList.remove('awaiting');
    if (m.content.length > RENDER_LIMIT) b.meta.append(h('span', { class: 'tag' }, formatSize(m.content.length)));
    this.addActions(b, m);
    this.follow(stick);
  }

  /** The card of one tool call in bubble `b` (made on first use, in call order, above the
   * reply's text). */
  toolCard(b, { toolCallId, toolName }) {
    let card = b.cards.get(toolCallId);
    if (card) return card;
    if (!b.tools) {
      b.tools = h('div', { class: 'tool-calls' });
      b.bubble.insertBefore(b.tools, b.body);
    }
    card = new ToolCard(toolCallId, toolName);
    b.cards.set(toolCallId, card);
    b.tools.append(card.el);
    return card;
  }

  /** A tool call waits for your answer (`approval-request`, or `pendingApprovals()` after a
   * reload): its card gets Approve / Deny. After a reload the reply has no bubble yet: one is
   * made, and the resumed reply streams into it (same messageId). */
  approvalRequest(e) {
    const stick = this.atBottom();
    let b = this.bubbles.get(e.messageId);
    if (!b) {
      b = this.makeBubble(e.messageId, e.agentName, e.createdAt ?? Date.now());
      this.insert(b.el);
    }
    // The world is idle while it waits: the bubble stops looking busy.
    b.el.classList.remove('streaming');
    b.el.removeAttribute('aria-busy');
    b.el.classList.add('awaiting');
    const card = this.toolCard(b, e);
    card.update({ args: e.args, state: 'waiting' });
    card.ask(e.approvalId, b.name, this.onApproval);
    this.follow(stick);
  }

  /** `approval-resolved`: the card says what was decided (the tool's result follows). */
  approvalResolved(e) {
    for (const b of this.bubbles.values()) {
      for (const card of b.cards?.values() ?? []) {
        if (card.approvalId === e.approvalId) {
          card.resolved(e.outcome);
          if (e.outcome !== 'approved') b.el.classList.remove('awaiting');
        }
      }
    }
  }

  /** Copy, and what the engine offers: regenerate (agent replies), edit and resend (your
   * messages), delete. */
  addActions(b, m) {
    b.el.querySelector('.msg-actions')?.remove();
    const isHuman = m.sender.toLowerCase() === HUMAN;
    const who = plainText(b.name);
    const a = this.actions;
    const btn = (cls, label, text, fn) => h('button', { type: 'button', class: `msg-act ${cls}`, 'aria-label': label, title: label, onclick: () => fn(m) }, text);
    const bar = h('div', { class: 'msg-actions' },
      copyButton(() => b.message?.content ?? b.text, isHuman ? 'Copy your message' : `Copy ${who}’s reply`, 'msg-act act-copy'),
      !isHuman && a.regenerate ? btn('act-regenerate', `Regenerate ${who}’s reply`, '↻ Regenerate', a.regenerate) : null,
      isHuman && a.edit ? btn('act-edit', 'Edit and resend your message', '✎ Edit', a.edit) : null,
      a.remove ? btn('act-delete', isHuman ? 'Delete your message' : `Delete ${who}’s reply`, '✕ Delete', a.remove) : null);
    b.el.querySelector('.msg-col').append(bar);
  }

  /** turn-limit / pass notices: centred, calm, not a bubble. */
  notice(m) {
    const label = { 'turn-limit': 'Turn limit', pass: 'Passed to you' }[m.kind] ?? m.kind;
    const el = h('div', {
      class: `notice notice-${m.kind}`, role: 'note', 'data-message-id': m.messageId, 'data-kind': m.kind,
    }, h('span', { class: 'notice-label' }, label), ' ');
    const text = h('span', { class: 'notice-text' });
    // The stored notice is the contract's text, addressed to "@human" and naming the agent by
    // id; people are shown the agent's display name and no address.
    const nameOf = (id) => this.agents.get(id)?.name ?? id;
    const pass = m.kind === 'pass' && /^@human (\S+) is passing control to you$/.exec(m.content);
    if (pass) {
      append(text, [bdi(nameOf(pass[1]), { class: 'who' }), ' is passing control to you']);
    } else if (m.kind === 'turn-limit' && m.content.startsWith('@human ')) {
      append(text, [bdi(nameOf(m.sender), { class: 'who' }), ': ']);
      const rest = h('span', {});
      renderInto(rest, m.content.slice('@human '.length), { knownIds: this.knownIds() });
      text.append(rest);
    } else {
      renderInto(text, m.content, { knownIds: this.knownIds() });
    }
    el.append(text);
    this.bubbles.set(m.messageId, { el, body: text, text: m.content });
    this.insert(el);
  }

  /** Places a view note (error, stopped) after message `after`, or at the end. */
  place(el, after) {
    const anchor = after ? this.root.querySelector(`[data-message-id="${CSS.escape(after)}"]`) : null;
    if (!anchor) return this.insert(el);
    this.clearEmpty();
    // After the anchor and the notes already placed behind it.
    let at = anchor;
    while (at.nextElementSibling?.classList.contains('view-note')) at = at.nextElementSibling;
    at.after(el);
    return undefined;
  }

  /** A system error event, inline, with a retry button. `retry` = {label, title} or null. */
  error(e, { retry = null, after = undefined, restored = false } = {}) {
    const who = e.agentName ? this.agents.get(e.agentName)?.name ?? e.agentName : null;
    const el = h('div', { class: `inline-error view-note${restored ? ' restored' : ''}`, role: restored ? null : 'alert', 'data-code': e.code },
      h('span', { class: 'err-icon', 'aria-hidden': 'true' }, '!'),
      h('div', { class: 'err-text' },
        h('strong', {}, who ? [bdi(who), ' could not answer'] : 'Something went wrong'),
        h('div', { class: 'err-detail' }, `${e.message} (${e.code})`),
        e.code === 'tool_not_registered'
          ? h('div', { class: 'err-hint' }, 'This page does not offer that tool: edit the agent and untick the tools marked “not available on this page”.')
          : null),
      retry && this.onRetry ? h('button', { type: 'button', class: 'small-btn retry-btn', title: retry.title, onclick: () => this.onRetry(e) }, retry.label) : null);
    if (after === undefined) this.insert(el);
    else this.place(el, after);
  }

  /** Under a human message no agent will answer (`system` `unanswered`): why, and how to
   * address someone. */
  unanswered(e) {
    const named = (id) => h('span', { class: 'mention' }, `@${id}`);
    const list = (ids) => ids.flatMap((id, i) => (i ? [', ', named(id)] : [named(id)]));
    const first = e.mentions?.[0];
    const agentName = first ? this.agents.get(first)?.name ?? first : '';
    let why;
    if (e.reason === 'mid-line-mention') {
      why = [list(e.mentions), e.mentions.length > 1 ? ' are' : ' is', ' mentioned mid-line; start a line with ',
        named(first), ' to ask ', bdi(agentName)];
    } else if (e.reason === 'unknown-mention') {
      why = ['no agent here is called ', list(e.mentions), '; pick one with @'];
    } else {
      why = ['this world has no agents yet; add one to get answers'];
    }
    const el = h('div', { class: 'notice notice-unanswered view-note', role: 'note', 'data-reason': e.reason },
      'Nobody was addressed: ', why);
    this.place(el, e.messageId);
  }

  /** A local notice that is not from the engine (e.g. "stopped"). */
  localNote(text, after = undefined) {
    const el = h('div', { class: 'notice notice-local view-note', role: 'note' }, text);
    if (after === undefined) this.insert(el);
    else this.place(el, after);
  }
}

/** A tool call's outcome as card fields: `result`, or `error` (what the model was told). */
function outcome(call) {
  if (call.error !== undefined && call.error !== null) return { error: call.error, state: 'error' };
  if (Object.hasOwn(call, 'result')) return { result: call.result, state: 'done' };
  return {};
}

/** Tool arguments and results can be long: a card shows at most this much of each. */
const CARD_LIMIT = 8000;
const STATE_TEXT = { running: 'running…', done: 'done', error: 'error', waiting: 'needs your approval' };

function json(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n)}…` : text;
}

/**
 * One tool call, compact: a <details> whose summary is the tool's name, its arguments on one
 * line and the state; opened, the arguments and the result or error in full (text nodes only).
 * A call that needs approval carries Approve / Deny under it.
 */
class ToolCard {
  constructor(toolCallId, toolName) {
    this.toolCallId = toolCallId;
    this.approvalId = null;
    this.name = bdi(toolName, { class: 'tool-name' });
    this.preview = h('span', { class: 'tool-args' });
    this.stateEl = h('span', { class: 'tool-state' });
    this.detail = h('div', { class: 'tool-detail' });
    this.details = h('details', { class: 'tool-details' },
      h('summary', {}, h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, '⚙'), this.name, this.preview, this.stateEl),
      this.detail);
    this.el = h('div', { class: 'tool-card', 'data-tool-call-id': toolCallId, 'data-tool': plainText(toolName) }, this.details);
    this.fields = {};
  }

  update(fields) {
    Object.assign(this.fields, fields);
    const { args, result, error, state } = this.fields;
    if (state) {
      this.el.dataset.state = state;
      // A denied call's error is what the model was told; the card says "denied".
      const denied = state === 'error' && String(this.fields.error ?? '').startsWith('denied by the user');
      this.stateEl.textContent = denied ? 'denied' : STATE_TEXT[state] ?? state;
    }
    const argsText = args === undefined ? '' : json(args);
    this.preview.textContent = clip(typeof args === 'string' ? args : JSON.stringify(args ?? {}) ?? '', 80);
    const section = (label, text, cls) => [h('div', { class: 'tool-label' }, label), h('pre', { class: cls }, clip(text, CARD_LIMIT))];
    this.detail.replaceChildren();
    append(this.detail, [
      section('Arguments', argsText, 'tool-args-full'),
      error !== undefined ? section('Error', String(error), 'tool-error') : null,
      error === undefined && Object.hasOwn(this.fields, 'result') ? section('Result', json(result), 'tool-result') : null,
    ]);
  }

  /** Approve / Deny for approval `approvalId`; `answer(approvalId, approve)` is app.js's. */
  ask(approvalId, agentName, answer) {
    this.approvalId = approvalId;
    this.el.querySelector('.approval')?.remove();
    const buttons = [];
    const go = async (approve) => {
      for (const btn of buttons) btn.disabled = true;
      const ok = await answer?.(approvalId, approve);
      if (ok === false) for (const btn of buttons) btn.disabled = false;
    };
    buttons.push(
      h('button', { type: 'button', class: 'small-btn approve-btn', onclick: () => go(true) }, 'Approve'),
      h('button', { type: 'button', class: 'small-btn deny-btn', onclick: () => go(false) }, 'Deny'));
    this.approval = h('div', { class: 'approval', role: 'group', 'aria-label': `Approve the ${plainText(this.name.textContent)} call` },
      h('span', { class: 'approval-text' }, bdi(agentName), ' wants to run ', bdi(this.name.textContent, { class: 'tool-name' }), ':'),
      // What exactly would run, in full (a URL to fetch must be read before it is approved).
      h('code', { class: 'approval-args' }, clip(JSON.stringify(this.fields.args ?? {}) ?? '', CARD_LIMIT)),
      h('span', { class: 'approval-actions' }, buttons));
    this.el.append(this.approval);
  }

  resolved(outcomeName) {
    const text = {
      approved: 'Approved', denied: 'Denied', cancelled: 'Cancelled', gone: 'Already answered or cancelled elsewhere',
    }[outcomeName] ?? outcomeName;
    this.el.dataset.approval = outcomeName;
    if (outcomeName === 'approved' && this.fields.state === 'waiting') this.update({ state: 'running' });
    if (outcomeName === 'cancelled' && this.fields.state === 'waiting') this.update({ state: 'error', error: 'cancelled before it was answered' });
    this.approval?.replaceChildren(h('span', { class: `approval-outcome outcome-${outcomeName}` }, text));
  }
}

/** The chats sidebar. */
export function renderChats(chats, currentId, handlers) {
  const list = $('chat-list');
  if (!chats.length) {
    replaceChildren(list, h('li', { class: 'side-empty' }, 'No chats'));
    return;
  }
  replaceChildren(list, chats.map((c) => {
    const current = c.id === currentId;
    return h('li', { class: `chat-item${current ? ' current' : ''}`, 'data-chat-id': c.id },
      h('button', {
        type: 'button', class: 'chat-open', 'aria-current': current ? 'true' : null,
        title: plainText(c.name), onclick: () => handlers.open(c.id),
      }, bdi(c.name, { class: 'chat-name' }),
      h('span', { class: 'chat-count' }, String(c.messageCount))),
      h('button', { type: 'button', class: 'icon-btn tiny', 'aria-label': `Rename chat ${plainText(c.name)}`, title: 'Rename', onclick: () => handlers.rename(c) }, '✎'),
      h('button', { type: 'button', class: 'icon-btn tiny', 'aria-label': `Delete chat ${plainText(c.name)}`, title: 'Delete', onclick: () => handlers.remove(c) }, '✕'));
  }));
}

/** The agents sidebar. */
export function renderAgents(agents, working, handlers) {
  const list = $('agent-list');
  if (!agents.length) {
    replaceChildren(list, h('li', { class: 'side-empty' }, 'No agents yet: add one.'));
    return;
  }
  replaceChildren(list, agents.map((a) => h('li', { class: `agent-item${working.has(a.id) ? ' working' : ''}`, 'data-agent-id': a.id },
    avatar(a.id, a.name),
    h('div', { class: 'agent-text' },
      h('div', { class: 'agent-name' }, bdi(a.name), ' ', h('span', { class: 'agent-id' }, `@${a.id}`)),
      h('div', { class: 'agent-model', title: `${a.provider} · ${plainText(a.model)}` }, bdi(a.model), ` · ${a.provider}`)),
    h('span', { class: 'typing', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')),
    h('button', { type: 'button', class: 'icon-btn tiny', 'aria-label': `Edit agent ${plainText(a.name)}`, title: 'Edit', onclick: () => handlers.edit(a) }, '✎'))));
}

/** The worlds <select>. */
export function renderWorlds(worlds, currentId) {
  const select = $('world-select');
  // An <option> holds text only: no <bdi> there, so the controls are removed instead.
  replaceChildren(select, worlds.map((w) => h('option', { value: w.id, selected: w.id === currentId }, plainText(w.name))));
  if (!worlds.length) select.append(h('option', { value: '', disabled: true, selected: true }, 'No worlds'));
}

/** The routing-decision panel (debug events), newest first, capped. */
export function addDebug(e, agents) {
  const list = $('debug-list');
  const name = agents.get(e.agent)?.name ?? e.agent;
  list.prepend(h('li', { class: `dbg dbg-${e.decision}` },
    h('span', { class: 'dbg-decision' }, e.decision),
    ' ', h('strong', {}, bdi(name)), `: ${e.reason}`,
    h('span', { class: 'dbg-id' }, ` · ${String(e.messageId).slice(0, 8)}`)));
  while (list.children.length > 200) list.lastElementChild.remove();
  $('debug-count').textContent = String(list.children.length);
}
