// Markdown for untrusted LLM output, built as DOM nodes from markdown-it's tokens.
//
// markdown-it (www/vendor/markdown-it.mjs, its own browser ES module build, vendored by
// scripts/vendor-markdown-it.sh) parses CommonMark + GFM tables and strikethrough into a flat
// token list; this module turns the tokens into elements with createElement and text nodes
// only. No innerHTML anywhere: every piece of model text reaches the page through a text node,
// so markup in a reply is only ever displayed. Raw HTML is off (`html: false`: shown as text),
// images are off (shown as text), and links are followed only when they are absolute http(s)
// URLs; any other link (javascript:, data:, relative …) is shown as its source text. Headings
// are shifted down two levels (# → h3) so a reply cannot outrank the page's own headings.
import MarkdownIt from './vendor/markdown-it.mjs';

/** Replies longer than this are shown as plain text, cut, with a button to show everything. */
export const RENDER_LIMIT = 40_000;

const md = new MarkdownIt('default', { html: false, linkify: true, breaks: true, typographer: false });
md.disable(['image']);
// Only http(s) links become links; markdown-it then leaves any other `[text](url)` as text.
md.validateLink = (url) => safeHref(url) !== null;
// linkify: bare URLs only when they carry their scheme ("https://…"), not "example.com".
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

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
    const url = new URL(String(raw).trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

// The only elements a token may create (markdown-it's tag for the token → ours).
const BLOCK_TAGS = new Set(['p', 'ul', 'ol', 'li', 'blockquote', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'hr']);
const INLINE_TAGS = new Set(['em', 'strong', 's', 'br']);
const HEADINGS = { h1: 'h3', h2: 'h4', h3: 'h5', h4: 'h6', h5: 'h6', h6: 'h6' };

/** The clipboard, with a fallback for pages where navigator.clipboard is missing. */
export async function copyText(text) {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'sr-only';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('the browser refused to copy');
}

/** A button that copies `getText()` and says so for a moment. */
export function copyButton(getText, label, className = 'copy-btn') {
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = className;
  btn.textContent = 'Copy';
  btn.setAttribute('aria-label', label);
  btn.addEventListener('click', async () => {
    try {
      await copyText(getText());
      btn.textContent = 'Copied';
    } catch {
      btn.textContent = 'Copy failed';
    }
    setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
  });
  return btn;
}

/** A fenced or indented code block: a header with the language and a copy button, then the code. */
function codeBlock(content, info) {
  const code = content.endsWith('\n') ? content.slice(0, -1) : content;
  const lang = (info ?? '').trim().split(/\s+/)[0].slice(0, 40);
  const wrap = document.createElement('div');
  wrap.className = 'code-block';
  const head = document.createElement('div');
  head.className = 'code-head';
  const label = document.createElement('span');
  label.className = 'code-lang';
  label.textContent = lang || 'code';
  head.append(label, copyButton(() => code, `Copy the ${lang || ''} code`.replace('  ', ' ')));
  const pre = document.createElement('pre');
  const el = document.createElement('code');
  if (lang) el.dataset.lang = lang;
  el.textContent = code;
  pre.append(el);
  wrap.append(head, pre);
  return wrap;
}

/** GFM table cells say their alignment as `style="text-align:…"`: a class instead (the CSP
 * allows no inline style, and no attribute of the model's is copied). */
function alignClass(token) {
  const style = token.attrGet('style') ?? '';
  const m = style.match(/text-align:(left|right|center)/);
  return m ? `align-${m[1]}` : '';
}

/** Inline tokens (the children of an `inline` token) into `parent`. */
function appendInline(parent, tokens, ctx) {
  const stack = [parent];
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    switch (t.type) {
      case 'text':
        appendWithMentions(top(), t.content, ctx.knownIds);
        break;
      case 'code_inline': {
        const code = document.createElement('code');
        code.textContent = t.content;
        top().append(code);
        break;
      }
      case 'softbreak':
      case 'hardbreak':
        top().append(document.createElement('br'));
        break;
      case 'link_open': {
        const href = safeHref(t.attrGet('href') ?? '');
        // validateLink let only http(s) through; checked again here all the same.
        const a = document.createElement(href ? 'a' : 'span');
        if (href) {
          a.href = href;
          a.target = '_blank';
          a.rel = 'noopener noreferrer nofollow';
          a.title = href;
        }
        top().append(a);
        stack.push(a);
        break;
      }
      case 'link_close':
        if (stack.length > 1) stack.pop();
        break;
      default: {
        const tag = t.tag;
        if (t.nesting === 1 && INLINE_TAGS.has(tag)) {
          const el = document.createElement(tag);
          top().append(el);
          stack.push(el);
        } else if (t.nesting === -1 && INLINE_TAGS.has(tag)) {
          if (stack.length > 1) stack.pop();
        } else if (t.content) {
          // Anything else (an html_inline if html were on, an image if it were on …): as text.
          appendWithMentions(top(), t.markup ? `${t.markup}${t.content}` : t.content, ctx.knownIds);
        }
      }
    }
  }
}

/** A task-list item ("[ ] x" / "[x] x" at the start of a list item): a disabled checkbox. */
function taskBox(li, inline) {
  const first = inline.children?.[0];
  if (!first || first.type !== 'text') return;
  const m = first.content.match(/^\[([ xX])\]\s+/);
  if (!m) return;
  first.content = first.content.slice(m[0].length);
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.disabled = true;
  box.checked = m[1] !== ' ';
  box.setAttribute('aria-label', box.checked ? 'done' : 'not done');
  li.classList.add('task');
  return box;
}

/**
 * Renders `text` into a DocumentFragment.
 * @param {string} text untrusted
 * @param {{knownIds?: Set<string>}} [options] ids whose @mentions are highlighted (all when absent)
 */
export function renderMarkdown(text, { knownIds = null } = {}) {
  const ctx = { knownIds };
  const frag = document.createDocumentFragment();
  const tokens = md.parse(String(text), {});
  const stack = [frag];
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    if (t.type === 'inline') {
      if (t.hidden) continue;
      const parent = top();
      const box = parent.tagName === 'LI' ? taskBox(parent, t) : null;
      if (box) parent.append(box, ' ');
      appendInline(parent, t.children ?? [], ctx);
    } else if (t.type === 'fence' || t.type === 'code_block') {
      top().append(codeBlock(t.content, t.info));
    } else if (t.nesting === 1) {
      // Tight lists hide their paragraphs: the text goes straight into the <li>.
      if (t.hidden) {
        stack.push(top());
        continue;
      }
      const tag = HEADINGS[t.tag] ?? (BLOCK_TAGS.has(t.tag) ? t.tag : 'div');
      const el = document.createElement(tag);
      if (tag === 'ol') {
        const raw = t.attrGet('start');
        const start = Number(raw);
        if (raw !== null && Number.isInteger(start) && start !== 1) el.start = start;
      }
      if (tag === 'th' || tag === 'td') {
        const cls = alignClass(t);
        if (cls) el.className = cls;
      }
      if (tag === 'table') {
        // A wide table scrolls in its own box instead of widening the bubble.
        const scroll = document.createElement('div');
        scroll.className = 'table-scroll';
        scroll.append(el);
        top().append(scroll);
      } else {
        top().append(el);
      }
      stack.push(el);
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (t.type === 'hr') {
      top().append(document.createElement('hr'));
    } else if (t.content) {
      // html_block (never produced with html: false) or an unknown block: as text.
      const p = document.createElement('p');
      p.textContent = t.content;
      top().append(p);
    }
  }
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
