// A small, safe markdown subset for untrusted LLM output, built as DOM nodes.
//
// Supported: paragraphs (blank line), line breaks, **bold**, *italic* / _italic_, `inline code`,
// ``` fenced code ```, [links](https://…) with http/https only, and @mentions highlighted.
// Everything else is shown as the literal text. No innerHTML anywhere: every piece of model
// text reaches the page through a text node, so markup in a reply is only ever displayed.

/** Replies longer than this are shown as plain text, cut, with a button to show everything. */
export const RENDER_LIMIT = 40_000;

const MENTION = /(^|[^\p{L}\p{N}_@-])@([\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*)/gu;

/** Appends `text` to `parent`, wrapping @mentions in <span class="mention">. */
export function appendWithMentions(parent, text, knownIds = null) {
  let last = 0;
  for (const m of text.matchAll(MENTION)) {
    const start = m.index + m[1].length;
    const name = m[2];
    if (knownIds && !knownIds.has(name.normalize('NFC').toLowerCase()) &&
        name.toLowerCase() !== 'human') continue;
    if (start > last) parent.append(document.createTextNode(text.slice(last, start)));
    const span = document.createElement('span');
    span.className = 'mention';
    span.textContent = `@${name}`;
    parent.append(span);
    last = start + 1 + name.length;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

/** A safe href: only absolute http(s) URLs, else null. */
export function safeHref(raw) {
  try {
    const url = new URL(raw.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

// Bounded repetitions keep the scan linear on hostile input (a long line of `[`…).
const INLINE = /`([^`\n]{1,2000})`|\*\*(?=\S)([^\n]{1,500}?)\*\*|(?<![\p{L}\p{N}*])\*(?=\S)([^*\n]{1,500}?)\*(?![\p{L}\p{N}*])|(?<![\p{L}\p{N}_])_(?=\S)([^_\n]{1,500}?)_(?![\p{L}\p{N}_])|\[([^\]\n]{1,500})\]\(([^)\s]{1,2000})\)/gu;

/** Inline markdown of one line into `parent`. */
function appendInline(parent, text, ctx, depth = 0) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) appendWithMentions(parent, text.slice(last, m.index), ctx.knownIds);
    last = m.index + m[0].length;
    if (m[1] !== undefined) {
      const code = document.createElement('code');
      code.textContent = m[1];
      parent.append(code);
    } else if (m[2] !== undefined || m[3] !== undefined || m[4] !== undefined) {
      const el = document.createElement(m[2] !== undefined ? 'strong' : 'em');
      const inner = m[2] ?? m[3] ?? m[4];
      if (depth < 3) appendInline(el, inner, ctx, depth + 1);
      else el.textContent = inner;
      parent.append(el);
    } else {
      const href = safeHref(m[6]);
      if (href) {
        const a = document.createElement('a');
        a.href = href;
        a.target = '_blank';
        a.rel = 'noopener noreferrer nofollow';
        a.textContent = m[5];
        a.title = href;
        parent.append(a);
      } else {
        // Not a link we follow (javascript:, data:, relative …): show it as plain text.
        parent.append(document.createTextNode(m[0]));
      }
    }
  }
  if (last < text.length) appendWithMentions(parent, text.slice(last), ctx.knownIds);
}

function paragraph(lines, ctx) {
  const p = document.createElement('p');
  lines.forEach((line, i) => {
    if (i > 0) p.append(document.createElement('br'));
    appendInline(p, line, ctx);
  });
  return p;
}

/**
 * Renders `text` into a DocumentFragment.
 * @param {string} text untrusted
 * @param {{knownIds?: Set<string>}} [options] ids whose @mentions are highlighted (all when absent)
 */
export function renderMarkdown(text, { knownIds = null } = {}) {
  const ctx = { knownIds };
  const frag = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let para = [];
  const flush = () => {
    if (para.length) frag.append(paragraph(para, ctx));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i].match(/^\s*(```|~~~)\s*([\w+-]*)\s*$/);
    if (fence) {
      flush();
      const body = [];
      let j = i + 1;
      while (j < lines.length && !lines[j].trimStart().startsWith(fence[1])) body.push(lines[j++]);
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      if (fence[2]) code.dataset.lang = fence[2];
      code.textContent = body.join('\n');
      pre.append(code);
      frag.append(pre);
      i = j; // skip the closing fence (or the end)
    } else if (lines[i].trim() === '') {
      flush();
    } else {
      para.push(lines[i]);
    }
  }
  flush();
  return frag;
}

/**
 * Fills `el` with the rendered text. Very long text is shown as plain text, cut at
 * RENDER_LIMIT characters, with a button that shows the rest (still as plain text).
 */
export function renderInto(el, text, options) {
  el.replaceChildren();
  if (text.length <= RENDER_LIMIT) {
    el.append(renderMarkdown(text, options));
    return;
  }
  const pre = document.createElement('div');
  pre.className = 'plain-long';
  pre.textContent = `${text.slice(0, RENDER_LIMIT)}…`;
  const more = document.createElement('button');
  more.type = 'button';
  more.className = 'small-btn';
  more.textContent = `Show all ${formatSize(text.length)}`;
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  el.append(pre, more);
}

export function formatSize(chars) {
  if (chars < 1000) return `${chars} characters`;
  if (chars < 1_000_000) return `${Math.round(chars / 1000)} k characters`;
  return `${(chars / 1_000_000).toFixed(1)} M characters`;
}
