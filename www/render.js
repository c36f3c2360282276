// Rendering: the message list (live streaming bubbles, notices, inline errors), and the
// sidebar lists (chats, agents, worlds). Model text goes through markdown.js only.
import { $, avatar, bdi, colourIndex, h, plainText, replaceChildren } from './dom.js';
import { RENDER_LIMIT, formatSize, renderInto } from './markdown.js';

const HUMAN = 'human';

const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** The conversation pane. One bubble per messageId: the stream and the final message share it. */
export class ChatView {
  constructor(root, { onRetry, onSuggest, onAddAgent }) {
    this.root = root;
    this.onRetry = onRetry;
    this.onSuggest = onSuggest;
    this.onAddAgent = onAddAgent;
    this.agents = new Map();
    this.reset();
  }

  reset() {
    /** messageId → {el, body, text, shown, reasoning, streaming} */
    this.bubbles = new Map();
    this.root.replaceChildren();
    this.empty = null;
  }

  setAgents(list) {
    this.agents = new Map(list.map((a) => [a.id, a]));
  }

  knownIds() {
    return new Set(this.agents.keys());
  }

  /** The empty state: what the demo can do, with a few prompts to try. */
  showEmpty(hasAgents) {
    if (this.bubbles.size || this.root.querySelector('.msg')) return;
    this.root.querySelector('.empty')?.remove();
    const names = [...this.agents.values()].flatMap((a, i) => (i ? [', ', bdi(a.name)] : [bdi(a.name)]));
    const tries = hasAgents
      ? [
          'Hello everyone! What should we build today?',
          `@${[...this.agents.keys()][0]} what do you think?`,
        ]
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

  /** A bubble shell for `sender`. */
  makeBubble(messageId, sender, createdAt) {
    const agent = this.agents.get(sender);
    const isHuman = sender.toLowerCase() === HUMAN;
    const name = isHuman ? 'You' : agent?.name ?? sender;
    const body = h('div', { class: 'body' });
    const meta = h('div', { class: 'meta' },
      bdi(name, { class: 'who' }),
      createdAt ? h('time', { datetime: new Date(createdAt).toISOString() }, time(createdAt)) : null);
    const el = h('article', {
      class: `msg ${isHuman ? 'from-human' : `from-agent hue-${colourIndex(sender)}`}`,
      'data-message-id': messageId, 'data-sender': sender,
      'aria-label': `${plainText(name)} says`,
    }, isHuman ? null : avatar(sender, name), h('div', { class: 'bubble' }, meta, body));
    const b = { el, body, meta, text: '', shown: 0, reasoning: null, streaming: false };
    this.bubbles.set(messageId, b);
    return b;
  }

  insert(el) {
    this.clearEmpty();
    const stick = this.atBottom();
    this.root.append(el);
    this.scroll(stick);
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
      b.el.classList.add('streaming');
      b.el.setAttribute('aria-busy', 'true');
      return;
    }
    if (!b) return;
    if (e.type === 'chunk' && e.content) {
      b.text += e.content;
      // While streaming, append plain text (cheap); markdown is rendered once at the end.
      if (b.shown < RENDER_LIMIT) {
        const piece = e.content.slice(0, RENDER_LIMIT - b.shown);
        if (!b.live) {
          b.body.replaceChildren();
          b.live = h('div', { class: 'live' });
          b.body.append(b.live);
        }
        b.live.append(document.createTextNode(piece));
        b.shown += piece.length;
        if (b.shown >= RENDER_LIMIT) b.live.append(document.createTextNode(' …'));
      }
      b.el.dataset.length = String(b.text.length);
    } else if (e.type === 'reasoning' && e.content) {
      if (!b.reasoning) {
        const text = h('div', { class: 'reasoning-text' });
        const det = h('details', { class: 'reasoning' }, h('summary', {}, 'Reasoning'), text);
        b.el.querySelector('.bubble').insertBefore(det, b.body);
        b.reasoning = text;
        b.reasoningText = '';
      }
      if (b.reasoningText.length < RENDER_LIMIT) {
        b.reasoningText += e.content;
        b.reasoning.append(document.createTextNode(e.content));
      }
    } else if (e.type === 'end' || e.type === 'error') {
      b.streaming = false;
      b.el.classList.remove('streaming');
      b.el.removeAttribute('aria-busy');
      if (e.type === 'error') {
        if (!b.text.trim()) {
          // Nothing was shown: the inline error (system event) says what happened.
          b.el.remove();
          this.bubbles.delete(e.messageId);
        } else {
          b.el.classList.add('interrupted');
        }
      }
    }
    this.scroll(stick);
  }

  /** A published message (human, agent reply, or an engine notice). */
  message(m) {
    const stick = this.atBottom();
    let b = this.bubbles.get(m.messageId);
    if (m.kind !== 'message' && m.kind !== 'interrupted') {
      b?.el.remove();
      this.notice(m);
      this.scroll(stick);
      return;
    }
    if (!b) {
      b = this.makeBubble(m.messageId, m.sender, m.createdAt);
      this.insert(b.el);
    }
    b.streaming = false;
    b.live = null;
    b.text = m.content;
    b.el.classList.remove('streaming');
    b.el.removeAttribute('aria-busy');
    b.el.classList.add('final');
    b.el.dataset.length = String(m.content.length);
    if (m.kind === 'interrupted') {
      b.el.classList.add('interrupted');
      if (!b.meta.querySelector('.tag')) b.meta.append(h('span', { class: 'tag' }, 'interrupted'));
    }
    renderInto(b.body, m.content, { knownIds: this.knownIds() });
    if (m.content.length > RENDER_LIMIT) b.meta.append(h('span', { class: 'tag' }, formatSize(m.content.length)));
    this.scroll(stick);
  }

  /** turn-limit / pass notices: centred, calm, not a bubble. */
  notice(m) {
    const label = { 'turn-limit': 'Turn limit', pass: 'Passed to you' }[m.kind] ?? m.kind;
    const el = h('div', {
      class: `notice notice-${m.kind}`, role: 'note', 'data-message-id': m.messageId, 'data-kind': m.kind,
    }, h('span', { class: 'notice-label' }, label), ' ');
    const text = h('span', { class: 'notice-text' });
    renderInto(text, m.content, { knownIds: this.knownIds() });
    el.append(text);
    this.bubbles.set(m.messageId, { el, body: text, text: m.content });
    this.insert(el);
  }

  /** A system error event, inline, with a retry button. */
  error(e) {
    const who = e.agentName ? this.agents.get(e.agentName)?.name ?? e.agentName : null;
    const el = h('div', { class: 'inline-error', role: 'alert', 'data-code': e.code },
      h('span', { class: 'err-icon', 'aria-hidden': 'true' }, '!'),
      h('div', { class: 'err-text' },
        h('strong', {}, who ? [bdi(who), ' could not answer'] : 'Something went wrong'),
        h('div', { class: 'err-detail' }, `${e.message} (${e.code})`)),
      this.onRetry ? h('button', { type: 'button', class: 'small-btn retry-btn', onclick: () => this.onRetry() }, 'Retry') : null);
    this.insert(el);
  }

  /** A local notice that is not from the engine (e.g. "stopped"). */
  localNote(text) {
    this.insert(h('div', { class: 'notice notice-local', role: 'note' }, text));
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
