// Tiny DOM helpers. Text always goes in through textContent / text nodes, never innerHTML.

/**
 * Builds an element: h('button', {class: 'x', type: 'button', onclick: fn}, 'label', child).
 * Attributes starting with `on` become listeners; `dataset`-style keys are set as attributes.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      el.className = value;
    } else if (key === 'text') {
      el.textContent = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends strings (as text nodes) and nodes, flattening arrays and skipping null. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

export const $ = (id) => document.getElementById(id);

// Bidi controls: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and the
// marks (U+200E, U+200F, U+061C). In a name they can reorder the text around it: an agent
// "\u202Eecila" would read as "alice", a chat "x\u202Egnp.exe" as "xexe.png".
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

/** `text` without bidi controls: for places that cannot hold an isolating element (the tab's
 * title, `<option>`, attributes such as `title` and `aria-label`). */
export function plainText(text) {
  return String(text ?? '').replace(BIDI_CONTROLS, '');
}

/**
 * A user- or model-supplied name (agent, chat, world, sender), for display: isolated in a
 * `<bdi>`, so right-to-left letters in it cannot reorder the text around it, and without bidi
 * controls, so it reads in its real order ("\u202Eecila" shows as "ecila", its id, not as
 * "alice"). Every such name is rendered through this.
 */
export function bdi(text, attrs = {}) {
  return h('bdi', attrs, plainText(text));
}

/** Replaces all children of `el`. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

const PALETTE = 8;
/** agent id → colour slot, in the order the agents were added (see setAgentOrder). */
let order = new Map();

/**
 * Agents get the palette's colours in the order they were added to the world (the engine lists
 * them so): the first eight never share a colour, whatever their ids (a hash gave Bob and Dev
 * the same one). Ids not in the list (a removed agent's old messages) fall back to a hash.
 */
export function setAgentOrder(ids) {
  order = new Map(ids.map((id, i) => [id, i % PALETTE]));
}

/** A stable colour slot (0..7) for an agent id. */
export function colourIndex(id) {
  const slot = order.get(id);
  if (slot !== undefined) return slot;
  let hash = 2166136261;
  for (const ch of String(id)) hash = Math.imul(hash ^ ch.codePointAt(0), 16777619);
  return (hash >>> 0) % PALETTE;
}

export function initial(name) {
  const first = [...plainText(name).trim()][0] ?? '?';
  return first.toLocaleUpperCase();
}

/** An avatar circle with the agent's initial in its colour. */
export function avatar(id, name, extra = '') {
  return h('span', { class: `avatar hue-${colourIndex(id)} ${extra}`.trim(), 'aria-hidden': 'true' },
    initial(name ?? id));
}
