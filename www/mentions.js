// @mention autocomplete for the composer: while the caret follows `@partial`, a listbox offers
// the agents whose id starts with it; ↑/↓ move, Enter/Tab pick, Escape closes.
import { avatar, bdi, h } from './dom.js';

/** The `@partial` right before the caret, or null. */
export function mentionAtCaret(value, caret) {
  const before = value.slice(0, caret);
  const m = before.match(/(^|[\s,(])@([\p{L}\p{N}_-]*)$/u);
  if (!m) return null;
  return { query: m[2], start: caret - m[2].length - 1 };
}

/** A mention (spec §3): `@name` not right after a name character or another `@`; `-` or `_`
 * continue a name only when more name characters follow. Ids are compared lower-cased. */
const MENTION = /(?<![\p{L}\p{N}\p{M}_@])@([\p{L}\p{N}\p{M}_]+(?:[-_][\p{L}\p{N}\p{M}_]+)*)/gu;
const LEADING_RUN = /^(?:@[\p{L}\p{N}\p{M}_]+(?:[-_][\p{L}\p{N}\p{M}_]+)*(?:[\s,]+|$))+/u;

/** The mentions of `text` (every one, and those at a line start), as lower-cased ids without
 * duplicates: what the engine routes on. A message with mentions but none at a line start is
 * answered by nobody, which the composer warns about before sending. */
export function mentionsOf(text) {
  const uniq = (v) => [...new Set(v.map((m) => m.normalize('NFC').toLowerCase()))];
  const all = uniq([...text.matchAll(MENTION)].map((m) => m[1]));
  const lineStart = uniq(text.split('\n').flatMap((line) => {
    const run = line.replace(/^[\s\uFEFF]+/u, '').match(LEADING_RUN);
    return run ? [...run[0].matchAll(MENTION)].map((m) => m[1]) : [];
  }));
  return { all, lineStart };
}

export function attachMentions(input, list, getAgents) {
  let items = [];
  let active = 0;
  let range = null;

  const close = () => {
    list.hidden = true;
    list.replaceChildren();
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    items = [];
    range = null;
  };

  const paint = () => {
    list.replaceChildren(...items.map((a, i) => h('li', {
      id: `mention-opt-${i}`, role: 'option', class: 'mention-opt',
      'aria-selected': i === active ? 'true' : 'false',
      onmousedown: (e) => { e.preventDefault(); pick(i); },
    }, avatar(a.id, a.name, 'avatar-sm'), h('span', { class: 'mention-id' }, `@${a.id}`),
    bdi(a.name, { class: 'mention-model' }))));
    input.setAttribute('aria-activedescendant', `mention-opt-${active}`);
  };

  const update = () => {
    const found = mentionAtCaret(input.value, input.selectionStart ?? input.value.length);
    if (!found) return close();
    const q = found.query.toLowerCase();
    items = getAgents().filter((a) => a.id.startsWith(q) || a.name.toLowerCase().startsWith(q));
    if (!items.length) return close();
    range = found;
    active = Math.min(active, items.length - 1);
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    paint();
  };

  const pick = (i) => {
    const agent = items[i];
    if (!agent || !range) return;
    const caret = input.selectionStart ?? input.value.length;
    const insert = `@${agent.id} `;
    input.value = input.value.slice(0, range.start) + insert + input.value.slice(caret);
    const pos = range.start + insert.length;
    input.setSelectionRange(pos, pos);
    close();
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.focus();
  };

  input.addEventListener('input', () => { active = 0; update(); });
  input.addEventListener('click', update);
  input.addEventListener('blur', () => setTimeout(close, 100));
  input.addEventListener('keydown', (e) => {
    if (list.hidden || !items.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      active = (active + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
      paint();
    } else if (e.key === 'Enter' || e.key === 'Tab') {
      e.preventDefault();
      e.stopImmediatePropagation();
      pick(active);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      close();
    }
  });
  return { isOpen: () => !list.hidden, close };
}
