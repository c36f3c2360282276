// The demo's tools: browser-safe functions an agent may call (README "Tools"). They live in the
// page (functions cannot be stored), so app.js registers them on every world it opens, old
// demo worlds included. No DOM here: tests import this module in Node too.

/** The calculator's longest expression, and its deepest nesting: a model cannot make it loop
 * or blow the stack. */
const MAX_EXPRESSION = 200;
const MAX_DEPTH = 32;
/** fetch_url keeps at most this many characters of the body (the model's context is finite). */
export const FETCH_LIMIT = 4000;
const FETCH_TIMEOUT_MS = 15_000;

const FUNCTIONS = {
  sqrt: Math.sqrt, abs: Math.abs, round: Math.round, floor: Math.floor, ceil: Math.ceil,
  ln: Math.log, log10: Math.log10, sin: Math.sin, cos: Math.cos, tan: Math.tan,
};
const CONSTANTS = { pi: Math.PI, e: Math.E };

/**
 * Evaluates arithmetic: numbers, + - * / % ^ (power, right-associative), parentheses, unary
 * minus, the constants pi and e, and sqrt abs round floor ceil ln log10 sin cos tan. A small
 * recursive-descent parser: never eval or Function (the page's CSP forbids both anyway).
 * Throws an Error saying what is wrong and where, which the model is given as the result.
 */
export function calculate(expression) {
  if (typeof expression !== 'string') throw new Error('expression must be a string');
  if (expression.length > MAX_EXPRESSION) throw new Error(`expression is longer than ${MAX_EXPRESSION} characters`);
  const src = expression.replace(/[×·]/g, '*').replace(/÷/g, '/').replace(/\*\*/g, '^');
  let i = 0;
  let depth = 0;
  const space = () => {
    while (i < src.length && /\s/.test(src[i])) i += 1;
  };
  const fail = (what) => {
    throw new Error(`${what} at position ${i + 1} of "${expression}"`);
  };
  const nest = (fn) => {
    depth += 1;
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    const v = fn();
    depth -= 1;
    return v;
  };

  function primary() {
    space();
    const c = src[i];
    if (c === '(') {
      i += 1;
      const v = nest(sum);
      space();
      if (src[i] !== ')') fail('expected ")"');
      i += 1;
      return v;
    }
    if (c === '-' || c === '+') {
      i += 1;
      const v = nest(power);
      return c === '-' ? -v : v;
    }
    const num = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      i += num[0].length;
      return Number(num[0]);
    }
    const word = /^[A-Za-z][A-Za-z0-9]*/.exec(src.slice(i));
    if (word) {
      const name = word[0].toLowerCase();
      i += word[0].length;
      if (Object.hasOwn(CONSTANTS, name)) return CONSTANTS[name];
      if (!Object.hasOwn(FUNCTIONS, name)) fail(`unknown name "${word[0]}"`);
      space();
      if (src[i] !== '(') fail(`expected "(" after ${name}`);
      return FUNCTIONS[name](primary());
    }
    return fail(i >= src.length ? 'unexpected end' : `unexpected "${c}"`);
  }

  function power() {
    const base = primary();
    space();
    if (src[i] === '^') {
      i += 1;
      return base ** nest(power);
    }
    return base;
  }

  function product() {
    let v = power();
    for (;;) {
      space();
      const op = src[i];
      if (op !== '*' && op !== '/' && op !== '%') return v;
      i += 1;
      const r = power();
      if ((op === '/' || op === '%') && r === 0) fail('division by zero');
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
  }

  function sum() {
    let v = product();
    for (;;) {
      space();
      const op = src[i];
      if (op !== '+' && op !== '-') return v;
      i += 1;
      v = op === '+' ? v + product() : v - product();
    }
  }

  space();
  if (i >= src.length) throw new Error('expression is empty');
  const value = sum();
  space();
  if (i < src.length) fail(`unexpected "${src[i]}"`);
  if (!Number.isFinite(value)) throw new Error(`the result of "${expression}" is not a finite number`);
  // 0.1 + 0.2 is 0.30000000000000004 in binary floating point; twelve significant digits
  // give the answer a person expects.
  return Number(value.toPrecision(12));
}

/** The current date and time in an IANA time zone, through Intl (no network). */
export function currentTime(timeZone = 'UTC', now = new Date()) {
  let fmt;
  try {
    fmt = new Intl.DateTimeFormat('en-GB', {
      timeZone, dateStyle: 'full', timeStyle: 'long',
    });
  } catch {
    throw new Error(`unknown time zone "${timeZone}": use an IANA name such as "Europe/Paris" or "UTC"`);
  }
  return { timeZone: fmt.resolvedOptions().timeZone, local: fmt.format(now), iso: now.toISOString() };
}

/**
 * GETs a URL (http or https only; the page's CSP allows https anywhere and http on localhost)
 * without cookies, and returns its status, type and at most FETCH_LIMIT characters of text.
 * Only sites that allow cross-origin reads (CORS) can be read from a page.
 */
export async function fetchUrl(url, { signal } = {}) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`"${url}" is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`only http and https URLs can be fetched, not ${parsed.protocol}`);
  if (parsed.username || parsed.password) throw new Error('a URL with a user name or password is refused');
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res;
  try {
    res = await fetch(parsed, { signal: both, credentials: 'omit', redirect: 'follow', referrerPolicy: 'no-referrer' });
  } catch (err) {
    if (signal?.aborted) throw err;
    if (timeout.aborted) throw new Error(`no answer from ${parsed.origin} within ${FETCH_TIMEOUT_MS / 1000} s`);
    throw new Error(`could not fetch ${parsed.href}: the site does not allow cross-origin reads (CORS), the page's security policy blocks it, or the network failed`);
  }
  // Read no more than needed: a huge body is cut, not downloaded whole.
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let truncated = false;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > FETCH_LIMIT) {
      truncated = true;
      await reader.cancel();
      break;
    }
  }
  if (!truncated) text += decoder.decode();
  return {
    url: res.url || parsed.href, status: res.status, contentType: res.headers.get('content-type') ?? '',
    text: text.slice(0, FETCH_LIMIT), truncated,
  };
}

/** The tool definitions (registerTool's argument), in the order the agent dialog lists them. */
export const DEMO_TOOLS = [
  {
    name: 'current_time',
    description: 'The current date and time in a time zone.',
    parameters: {
      type: 'object',
      properties: { timeZone: { type: 'string', description: 'An IANA time zone, e.g. "Europe/Paris", "Asia/Tokyo" or "UTC".' } },
      additionalProperties: false,
    },
    execute: ({ timeZone }) => currentTime(timeZone ?? 'UTC'),
    timeoutMs: 5000,
  },
  {
    name: 'calculator',
    description: 'Evaluates an arithmetic expression exactly: + - * / % ^, parentheses, pi, e, sqrt, abs, round, floor, ceil, ln, log10, sin, cos, tan.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'For example "17 * 23" or "sqrt(2) ^ 2".' } },
      required: ['expression'],
      additionalProperties: false,
    },
    execute: ({ expression }) => ({ expression, value: calculate(expression) }),
    timeoutMs: 5000,
  },
  {
    name: 'fetch_url',
    description: `Reads a web page or file (GET, http or https; only sites that allow cross-origin reads). Returns its status, content type and the first ${FETCH_LIMIT} characters. Asks the user first.`,
    parameters: {
      type: 'object',
      properties: { url: { type: 'string', description: 'An absolute http(s) URL.' } },
      required: ['url'],
      additionalProperties: false,
    },
    execute: ({ url }, { signal }) => fetchUrl(url, { signal }),
    needsApproval: true,
    timeoutMs: 20_000,
  },
];

/**
 * Registers the demo tools on `world` (every world the page opens: tools live in memory only).
 * A tool already registered (the same world handle) is replaced. Returns the errors, as text.
 */
export function registerDemoTools(world) {
  const errors = [];
  for (const tool of DEMO_TOOLS) {
    try {
      if (world.tools().some((t) => t.name === tool.name)) world.unregisterTool(tool.name);
      world.registerTool(tool);
    } catch (err) {
      errors.push(`${tool.name}: ${err?.message ?? err}`);
    }
  }
  return errors;
}
