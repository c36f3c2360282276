// The demo's tools (www/tools.js) in Node: the calculator's parser (what it computes, what it
// refuses and how it says so), current_time's time zones, fetch_url's URL rules, size cap and
// abort, against a local HTTP server. The page runs the same module (tests/e2e/tools.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { DEMO_TOOLS, FETCH_LIMIT, calculate, currentTime, fetchUrl } from '../../www/tools.js';

test('calculator: precedence, power, unary minus, parentheses, names', () => {
  const cases = {
    '17 * 23': 391, '1 + 2 * 3': 7, '(1 + 2) * 3': 9, '2 ^ 3 ^ 2': 512, '2 ** 10': 1024,
    '-2 ^ 2': -4, '10 % 4': 2, '7 / 2': 3.5, '0.1 + 0.2': 0.3, '1e3 + .5': 1000.5,
    'sqrt(16) + abs(-3)': 7, 'round(pi * 100)': 314, '2 × 3 ÷ 4': 1.5, ' - ( - 4 ) ': 4,
    'floor(2.7) + ceil(2.1)': 5, 'ln(e)': 1,
  };
  for (const [expr, value] of Object.entries(cases)) assert.equal(calculate(expr), value, expr);
});

test('calculator: bad input is an Error that says what and where, never evaluated as code', () => {
  const cases = {
    '2 * (3': /expected "\)" at position 7/,
    '2 +': /unexpected end/,
    '1 / 0': /division by zero/,
    '5 % 0': /division by zero/,
    '2 3': /unexpected "3" at position 3/,
    'alert(1)': /unknown name "alert"/,
    'constructor': /unknown name "constructor"/,
    '__proto__': /unexpected "_"/,
    'sqrt 4': /expected "\(" after sqrt/,
    '': /expression is empty/,
    '10 ^ 400': /not a finite number/,
    [`${'('.repeat(40)}1${')'.repeat(40)}`]: /nesting deeper than 32/,
    ['1+'.repeat(101) + '1']: /longer than 200 characters/,
  };
  for (const [expr, message] of Object.entries(cases)) assert.throws(() => calculate(expr), message, JSON.stringify(expr));
  assert.throws(() => calculate(42), /expression must be a string/);
});

test('current_time: an IANA zone, its local time and the instant; a bad zone is named', () => {
  const now = new Date('2026-01-15T12:00:00Z');
  const paris = currentTime('Europe/Paris', now);
  assert.deepEqual([paris.timeZone, paris.iso], ['Europe/Paris', '2026-01-15T12:00:00.000Z']);
  assert.match(paris.local, /15 January 2026 at 13:00:00/);
  assert.match(currentTime(undefined, now).local, /at 12:00:00/);
  assert.throws(() => currentTime('Mars/Olympus'), /unknown time zone "Mars\/Olympus": use an IANA name/);
});

test('fetch_url: http(s) only, no credentials in the URL, body capped, abort honoured', async (t) => {
  const server = createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(FETCH_LIMIT * 20));
    } else if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 5000);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  const base = `http://127.0.0.1:${server.address().port}`;

  assert.deepEqual(await fetchUrl(`${base}/small`), {
    url: `${base}/small`, status: 200, contentType: 'application/json', text: '{"ok":true}', truncated: false,
  });
  const big = await fetchUrl(`${base}/big`);
  assert.equal(big.text.length, FETCH_LIMIT);
  assert.equal(big.truncated, true);
  for (const [url, message] of [['file:///etc/passwd', /only http and https/], ['javascript:alert(1)', /only http and https/],
    ['data:text/plain,hi', /only http and https/], ['/relative', /is not an absolute URL/],
    [`http://user:secret@127.0.0.1:1/`, /user name or password is refused/]]) {
    await assert.rejects(fetchUrl(url), message, url);
  }
  await assert.rejects(fetchUrl('http://127.0.0.1:1/'), /could not fetch http:\/\/127\.0\.0\.1:1\/: the site does not allow cross-origin reads/);
  const stop = new AbortController();
  const pending = fetchUrl(`${base}/slow`, { signal: stop.signal });
  stop.abort();
  await assert.rejects(pending, { name: 'AbortError' });
});

test('the tool definitions: names, schemas, and approval only for fetch_url', async () => {
  assert.deepEqual(DEMO_TOOLS.map((d) => [d.name, !!d.needsApproval]), [['current_time', false], ['calculator', false], ['fetch_url', true]]);
  const calc = DEMO_TOOLS.find((d) => d.name === 'calculator');
  assert.deepEqual(await calc.execute({ expression: '6 * 7' }, {}), { expression: '6 * 7', value: 42 });
});
