// Ring 5: the demo app in real headless Chromium (Debian's), driven by playwright-core, against
// the same server `make demo` runs (static files + the local mock LLM). Every test opens a fresh
// browser context (its own IndexedDB), so every test starts from the ready-made "Demo World".
// Screenshots of the main states go to test-output/.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { demoAndBrowser } from '../support/demo-browser.mjs';

const out = new URL('../../test-output/', import.meta.url);
mkdirSync(out, { recursive: true });
const shot = (page, name, opts = {}) => page.screenshot({ path: new URL(name, out).pathname, ...opts });
const env = demoAndBrowser();

/** A fresh page on the demo, ready (engine loaded, Demo World open). */
async function openApp(t, viewport = { width: 1200, height: 800 }) {
  const context = await env.browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  const dialogs = [];
  const consoleText = [];
  page.on('console', (m) => consoleText.push(m.text()));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  t.after(() => context.close());
  await page.goto(env.demo.url);
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
  return { page, problems, dialogs, consoleText };
}

async function createWorld(page, name, turnLimit) {
  await page.click('#new-world');
  await page.fill('#world-name', name);
  await page.fill('#world-turn-limit', String(turnLimit));
  await page.click('#world-form button[type="submit"]');
  await page.waitForFunction((n) => document.getElementById('world-title').textContent.startsWith(n), name);
}

async function addAgent(page, { name, model, systemPrompt = '', provider = 'openai-compatible', screenshot }) {
  await page.click('#add-agent');
  await page.fill('#agent-name', name);
  await page.selectOption('#agent-provider', provider);
  await page.fill('#agent-model', model);
  await page.fill('#agent-prompt', systemPrompt);
  if (screenshot) await shot(page, screenshot);
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await page.waitForSelector(`.agent-item[data-agent-id="${name.toLowerCase()}"]`);
}

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** Waits until no agent works (the Stop button is disabled again). */
async function idle(page, timeout = 20_000) {
  await page.waitForFunction(() => document.getElementById('stop').disabled
    && !document.querySelector('.msg.streaming'), null, { timeout });
}

const count = (page, selector) => page.locator(selector).count();
const finals = (page, sender) => count(page, `.msg.final[data-sender="${sender}"]`);

test('the Demo World is ready on first load and shows an agent hand-over', async (t) => {
  const { page, problems } = await openApp(t);
  assert.match(await page.textContent('#version'), /^\d+\.\d+\.\d+/);
  // Alice, Bob, Carol, and Tess with the demo's tools (tests/e2e/tools.test.mjs).
  assert.equal(await count(page, '.agent-item'), 4);
  // IndexedDB works in Chromium: no "memory only" warning.
  assert.equal(await page.isVisible('#storage-note'), false, 'the memory-only note is hidden');
  await page.waitForSelector('.empty .suggestion');
  await shot(page, 'demo-empty.png');

  await page.click('.empty .suggestion >> nth=0');
  await page.waitForSelector('.notice-pass', { timeout: 20_000 });
  await idle(page);
  // Alice, Bob and Tess answer (Tess with two tool calls), Carol hands over to Alice, Alice
  // answers Carol, Carol passes to you.
  assert.deepEqual(await page.$$eval('.msg', (els) => els.map((e) => e.dataset.sender)),
    ['HUMAN', 'alice', 'bob', 'carol', 'tess', 'alice', 'carol']);
  assert.equal(await count(page, '.msg[data-sender="tess"] .tool-card[data-state="done"]'), 2);
  assert.equal(await page.textContent('.notice-pass .notice-text'), 'Carol is passing control to you');
  assert.ok(await count(page, '.msg[data-sender="carol"] .mention'), 'the hand-over mention is highlighted');
  // Bob's scripted reasoning is there, collapsed.
  const reasoning = page.locator('.msg[data-sender="bob"] details.reasoning');
  assert.equal(await reasoning.getAttribute('open'), null);
  assert.match(await reasoning.textContent(), /Check the risky part first/);
  // The chat got its title from the first message, live.
  await page.waitForFunction(() => document.querySelector('.chat-item.current .chat-name')
    ?.textContent === 'What should we build today?');
  assert.equal(await page.textContent('#chat-title'), 'What should we build today?');
  await shot(page, 'demo-conversation.png');

  // Reload: the world, its agents, the chat and its title and every message come back from
  // IndexedDB, and the ready-made world is not created a second time.
  await page.reload();
  await page.waitForSelector('.msg.final[data-sender="carol"]', { timeout: 15_000 });
  assert.deepEqual(await page.$$eval('.msg', (els) => els.map((e) => e.dataset.sender)),
    ['HUMAN', 'alice', 'bob', 'carol', 'tess', 'alice', 'carol']);
  assert.equal(await count(page, '.agent-item'), 4);
  assert.equal(await page.textContent('#chat-title'), 'What should we build today?');
  assert.equal(await page.locator('#world-select option').filter({ hasText: 'Demo World' }).count(), 1);
  assert.deepEqual(problems, []);
});

test('a world and two agents made in the UI: both stream, a mention picks one', async (t) => {
  const { page, problems } = await openApp(t);
  await createWorld(page, 'Studio', 5);
  assert.equal(await count(page, '.agent-item'), 0);
  await addAgent(page, { name: 'Alice', model: 'mock-alice', systemPrompt: 'mock-delay: 40' });
  await addAgent(page, { name: 'Bob', model: 'mock-bob', systemPrompt: 'mock-delay: 40' });

  await send(page, 'Hello both, how are you?');
  // Alice's bubble grows while it streams, then Bob's (one call at a time, in order).
  for (const who of ['alice', 'bob']) {
    const live = page.locator(`.msg.streaming[data-sender="${who}"]`);
    await live.waitFor({ timeout: 10_000 });
    await page.waitForFunction((w) => Number(document.querySelector(`.msg.streaming[data-sender="${w}"]`)
      ?.dataset.length ?? 0) > 0, who);
    const first = Number(await live.getAttribute('data-length'));
    await page.waitForTimeout(250);
    const second = Number(await live.getAttribute('data-length'));
    assert.ok(second > first, `${who}'s bubble did not grow while streaming (${first} → ${second})`);
    assert.equal(await page.isDisabled('#stop'), false, 'Stop is enabled while agents work');
    if (who === 'alice') await shot(page, 'demo-streaming.png');
  }
  await idle(page);
  assert.equal(await finals(page, 'alice'), 1);
  assert.equal(await finals(page, 'bob'), 1);

  // Autocomplete: "@b" offers Bob; Enter picks him.
  await page.fill('#input', '');
  await page.type('#input', '@b');
  await page.waitForSelector('#mention-list .mention-opt');
  assert.equal(await page.textContent('#mention-list .mention-opt[aria-selected="true"] .mention-id'), '@bob');
  await shot(page, 'demo-mention-autocomplete.png');
  await page.press('#input', 'Enter');
  assert.equal(await page.inputValue('#input'), '@bob ');
  await page.type('#input', 'just you, please');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('.msg.final[data-sender="bob"]').length === 2);
  await idle(page);
  await page.waitForTimeout(300);
  assert.equal(await finals(page, 'alice'), 1, 'Alice stays silent when Bob is mentioned');
  assert.ok(await count(page, '.msg.from-human .mention'), 'the mention is highlighted in my message');

  // Edit Alice (temperature, max tokens), then remove her.
  await page.click('[aria-label="Edit agent Alice"]');
  assert.equal(await page.inputValue('#agent-model'), 'mock-alice');
  await page.fill('#agent-temperature', '0.3');
  await page.fill('#agent-max-tokens', '256');
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await page.click('[aria-label="Edit agent Alice"]');
  assert.equal(await page.inputValue('#agent-temperature'), '0.3');
  assert.equal(await page.inputValue('#agent-max-tokens'), '256');
  await page.click('#agent-remove');
  await page.click('#ask-ok');
  await page.waitForSelector('.agent-item[data-agent-id="alice"]', { state: 'detached' });
  assert.equal(await count(page, '.agent-item'), 1);
  assert.deepEqual(problems, []);
});

test('ping-pong to the turn-limit notice; chats: new, back, delete with fallback', async (t) => {
  const { page, problems } = await openApp(t);
  await createWorld(page, 'Ping Pong', 2);
  await addAgent(page, { name: 'Ping', model: 'mock-ping', systemPrompt: 'mock-reply: @pong ping {n}' });
  await addAgent(page, { name: 'Pong', model: 'mock-pong', systemPrompt: 'mock-reply: @ping pong {n}' });
  await send(page, '@ping start the rally');
  const notice = page.locator('.notice-turn-limit');
  await notice.waitFor({ timeout: 20_000 });
  await idle(page);
  assert.match(await notice.textContent(), /Turn limit reached \(2 LLM calls\)/);
  // People see the agent's display name, not its id or the notice's "@human" address.
  assert.match(await notice.textContent(), /P[io]ng: Turn limit reached/);
  assert.doesNotMatch(await notice.textContent(), /@human/);
  assert.equal(await finals(page, 'ping'), 2);
  assert.equal(await finals(page, 'pong'), 2);
  await page.waitForFunction(() => document.querySelector('.chat-item.current .chat-name')?.textContent === 'start the rally');
  await shot(page, 'demo-turn-limit.png');

  // A new chat: empty, current; the old one stays in the list.
  await page.click('#new-chat');
  await page.waitForFunction(() => document.getElementById('chat-title').textContent === 'New Chat');
  assert.equal(await count(page, '.msg'), 0);
  await page.waitForSelector('.empty');
  await send(page, '@pong second chat here');
  await page.waitForSelector('.notice-turn-limit', { timeout: 20_000 });
  await idle(page);
  await page.waitForFunction(() => document.querySelector('.chat-item.current .chat-name')?.textContent === 'second chat here');
  assert.equal(await count(page, '.chat-item'), 2);

  // Back to the first chat: its messages come back.
  await page.click('.chat-item:has-text("start the rally") .chat-open');
  await page.waitForFunction(() => document.getElementById('chat-title').textContent === 'start the rally');
  assert.equal(await page.textContent('.msg.from-human .body'), '@ping start the rally');
  assert.equal(await count(page, '.notice-turn-limit'), 1);
  assert.equal(await page.getAttribute('.chat-item.current .chat-open', 'aria-current'), 'true');

  // Rename it, then delete it: the other chat becomes current and is shown.
  await page.click('.chat-item.current [aria-label^="Rename chat"]');
  await page.fill('#ask-input', 'First rally');
  await page.click('#ask-ok');
  await page.waitForFunction(() => document.getElementById('chat-title').textContent === 'First rally');
  await page.click('.chat-item.current [aria-label^="Delete chat"]');
  await page.click('#ask-ok');
  await page.waitForFunction(() => document.getElementById('chat-title').textContent === 'second chat here');
  assert.equal(await count(page, '.chat-item'), 1);
  assert.equal(await page.textContent('.msg.from-human .body'), '@pong second chat here');

  // World settings: a higher turn limit lets the rally run longer.
  await page.click('#edit-world');
  assert.equal(await page.inputValue('#world-turn-limit'), '2');
  await page.fill('#world-turn-limit', '3');
  await page.click('#world-save');
  await page.waitForFunction(() => document.getElementById('world-title').textContent === 'Ping Pong · turn limit 3');
  await send(page, '@ping again');
  await page.waitForFunction(() => document.querySelectorAll('.notice-turn-limit').length === 2, null, { timeout: 20_000 });
  await idle(page);
  assert.match(await page.locator('.notice-turn-limit').last().textContent(), /\(3 LLM calls\)/);
  assert.deepEqual(problems, []);
});

test('export a world to a file and import it back', async (t) => {
  const { page, problems } = await openApp(t);
  await send(page, '@bob tell me something');
  await page.waitForSelector('.msg.final[data-sender="bob"]', { timeout: 20_000 });
  await idle(page);
  const before = await page.$$eval('.msg .body', (els) => els.map((e) => e.textContent));

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-world')]);
  // `<worldId>-<YYYY-MM-DD>.json`: backups of one world sort by date.
  const today = await page.evaluate(() => {
    const d = new Date();
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  });
  assert.equal(download.suggestedFilename(), `demo-world-${today}.json`);
  const file = new URL('demo-world.json', out).pathname;
  await download.saveAs(file);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(doc.world.name, 'Demo World');
  assert.doesNotMatch(JSON.stringify(doc), /apiKey/, 'no keys in an export');

  // Delete it (nothing left), then import the file.
  await page.click('#delete-world');
  await page.click('#ask-ok');
  await page.waitForFunction(() => document.getElementById('chat-title').textContent === 'No world open');
  assert.equal(await count(page, '.msg'), 0);
  await page.setInputFiles('#import-file', file);
  await page.waitForFunction(() => document.getElementById('world-title').textContent.startsWith('Demo World'));
  await page.waitForFunction((n) => document.querySelectorAll('.msg').length === n, before.length);
  assert.deepEqual(await page.$$eval('.msg .body', (els) => els.map((e) => e.textContent)), before);
  assert.equal(await count(page, '.agent-item'), 4);
  // The imported world still talks (providers are re-applied; keys never travel in files).
  await send(page, '@alice welcome back');
  await page.waitForFunction(() => document.querySelectorAll('.msg.final[data-sender="alice"]').length === 1);
  await idle(page);
  assert.deepEqual(problems, []);
});

test('two tabs of the demo on one world show each other\'s messages without a reload', async (t) => {
  // One browser context: the tabs share IndexedDB, as two tabs of one site do.
  const context = await env.browser.newContext({ viewport: { width: 1200, height: 800 } });
  t.after(() => context.close());
  const problems = [];
  const openTab = async () => {
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    await page.goto(env.demo.url);
    await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
    return page;
  };
  const a = await openTab(); // makes the Demo World
  const b = await openTab(); // opens it
  const shown = (page) => page.$$eval('.msg.final', (els) => els.map((e) =>
    `${e.dataset.sender}: ${e.querySelector('.body, .content')?.textContent ?? e.textContent}`));
  const sameAs = async (from, to) => {
    const want = await shown(from);
    await to.waitForFunction((n) => document.querySelectorAll('.msg.final').length === n
      && !document.querySelector('.msg.streaming'), want.length, { timeout: 20_000 });
    assert.deepEqual(await shown(to), want);
  };

  await send(a, '@alice, a question from the first tab');
  await idle(a);
  await sameAs(a, b);
  assert.ok((await shown(b)).some((m) => m.includes('a question from the first tab')), 'B shows A\'s message');

  await send(b, '@bob, and one from the second tab');
  await idle(b);
  await sameAs(b, a);
  const senders = await a.$$eval('.msg.final', (els) => els.map((e) => e.dataset.sender));
  assert.deepEqual(senders.filter((s) => s === 'HUMAN').length, 2, `${senders}`);
  // The chat list agrees too: one chat, titled from the first message, in both tabs.
  for (const page of [a, b]) {
    await page.waitForFunction(() => document.querySelector('.chat-item.current .chat-name')
      ?.textContent === 'a question from the first tab');
  }
  await shot(b, 'demo-second-tab.png');
  assert.deepEqual(problems, []);
});

test('the Stop button cancels a slow reply', async (t) => {
  const { page, problems } = await openApp(t);
  await createWorld(page, 'Slow', 5);
  await addAgent(page, { name: 'Slow', model: 'mock-slow', systemPrompt: 'mock-delay: 300' });
  await send(page, 'take your time');
  await page.waitForFunction(() => Number(document.querySelector('.msg.streaming[data-sender="slow"]')
    ?.dataset.length ?? 0) > 0, null, { timeout: 10_000 });
  assert.equal(await page.isDisabled('#stop'), false);
  const t0 = Date.now();
  await page.click('#stop');
  await idle(page, 3000);
  assert.ok(Date.now() - t0 < 3000);
  const len = await page.getAttribute('.msg[data-sender="slow"]', 'data-length');
  await page.waitForTimeout(900);
  assert.equal(await page.getAttribute('.msg[data-sender="slow"]', 'data-length'), len, 'nothing streams after Stop');
  assert.ok(await count(page, '.msg.interrupted[data-sender="slow"]'), 'the partial reply is kept, marked');
  assert.ok(await count(page, '.notice-local'), 'a note says it stopped');
  assert.equal(await count(page, '.inline-error'), 0, 'our own cancel is not shown as an error');
  assert.deepEqual(problems, []);
});

test('switching or deleting a world while an agent answers: the new world shows, nothing is lost', async (t) => {
  const { page, problems } = await openApp(t);
  const streaming = () => page.waitForFunction(() => Number(document.querySelector('.msg.streaming[data-sender="slow"]')
    ?.dataset.length ?? 0) > 0, null, { timeout: 10_000 });
  await createWorld(page, 'Busy', 5);
  await addAgent(page, { name: 'Slow', model: 'mock-slow', systemPrompt: 'mock-delay: 300' });
  await send(page, 'first question');
  await streaming();
  // Mid-stream: a new world. It shows at once, empty, and works.
  await createWorld(page, 'Calm', 5);
  assert.equal(await count(page, '.msg'), 0, 'the new world does not show the old chat');
  await addAgent(page, { name: 'Quick', model: 'mock-quick' });
  await send(page, 'hello calm world');
  await page.waitForFunction(() => document.querySelectorAll('.msg.final[data-sender="quick"]').length === 1, null, { timeout: 20_000 });
  await idle(page);
  // Back in the busy world: the question is there, and the reply it had begun is kept.
  await page.selectOption('#world-select', 'busy');
  await page.waitForFunction(() => document.getElementById('world-title').textContent.startsWith('Busy'));
  await page.waitForFunction(() => document.querySelector('.msg[data-sender="HUMAN"] .body')?.textContent === 'first question');
  assert.ok(await count(page, '.msg.interrupted[data-sender="slow"]'), 'the partial reply is kept as interrupted');
  // It still answers; then delete it while it streams: the delete is done.
  await send(page, 'second question');
  await streaming();
  await page.click('#delete-world');
  await page.click('#ask-ok');
  await page.waitForFunction(() => ![...document.querySelectorAll('#world-select option')].some((o) => o.value === 'busy'), null, { timeout: 10_000 });
  assert.ok(!(await page.textContent('#world-title')).startsWith('Busy'), 'the deleted world is not shown');
  assert.deepEqual(problems, []);
});

test('errors show inline with a retry button; debug explains routing', async (t) => {
  const { page, problems } = await openApp(t);
  await page.click('#open-settings');
  await page.waitForSelector('#settings-dialog[open]');
  await shot(page, 'demo-settings.png');
  await page.check('#debug-toggle');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#debug-panel:not([hidden])');

  await addAgent(page, { name: 'Dana', provider: 'anthropic', model: 'claude-3-5-haiku-latest', screenshot: 'demo-agent-dialog.png' });
  await send(page, '@dana are you there?');
  const error = page.locator('.inline-error[data-code="provider_not_configured"]');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /anthropic.*apiKey/);
  await idle(page);
  // The engine regenerates a failed reply (§10): Retry asks Dana again, without sending my
  // message again to everyone.
  assert.equal(await page.textContent('.inline-error .retry-btn'), 'Retry');
  await page.click('.inline-error .retry-btn');
  await page.waitForFunction(() => document.querySelectorAll('.inline-error').length === 2);
  await idle(page);
  assert.equal(await count(page, '.msg.from-human'), 1, 'retry did not re-send my message');

  // Routing decisions: Alice, Bob and Carol ignored the message addressed to Dana.
  await page.click('#debug-panel summary');
  const lines = await page.$$eval('#debug-list li', (els) => els.map((e) => e.textContent));
  assert.ok(lines.some((l) => /^ignore Alice/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /^respond Dana/.test(l)), lines.join('\n'));
  await shot(page, 'demo-debug-error.png');
  assert.deepEqual(problems, []);
});

test('model output cannot run script, open dialogs or hang the page', async (t) => {
  const { page, problems, dialogs } = await openApp(t);
  await createWorld(page, 'Hostile', 5);
  await addAgent(page, { name: 'Img', model: 'mock-img', systemPrompt: 'mock-reply: <img src=x onerror="window.__pwned=1"> **bold**' });
  await addAgent(page, { name: 'Scr', model: 'mock-scr', systemPrompt: 'mock-reply: <script>window.__pwned=2</script>\\n```html\\n<script>alert(1)</script>\\n```' });
  await addAgent(page, { name: 'Lnk', model: 'mock-lnk', systemPrompt: 'mock-reply: [click](javascript:alert(1)) [data](data:text/html,<script>alert(1)</script>) [ok](https://example.com)' });
  await addAgent(page, { name: 'Huge', model: 'mock-huge', systemPrompt: 'mock-fault: huge:1000000' });
  await addAgent(page, { name: 'Mdx', model: 'mock-mdx', systemPrompt: 'mock-reply: | a | b |\\n|---|--:|\\n| <i>x</i> | [j](javascript:alert(3)) |\\n\\n<div onclick="alert(4)">raw</div>\\n\\n```python\\nprint("<b>hi</b>")\\n```' });
  await send(page, 'show me what you have');
  await page.waitForSelector('.msg.final[data-sender="huge"]', { timeout: 30_000 });
  await idle(page, 30_000);

  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(dialogs, []);
  assert.equal(await count(page, '.messages img, .messages script, .messages iframe'), 0);
  assert.equal(await count(page, 'a[href^="javascript:" i], a[href^="data:" i]'), 0);
  assert.equal(await page.getAttribute('.msg[data-sender="lnk"] a', 'href'), 'https://example.com/');
  assert.match(await page.textContent('.msg[data-sender="img"] .body'), /<img src=x onerror=/);
  assert.equal(await page.textContent('.msg[data-sender="img"] .body strong'), 'bold', 'safe markdown still renders');
  assert.equal(await page.textContent('.msg[data-sender="scr"] pre code'), '<script>alert(1)</script>');
  assert.equal(await page.getAttribute('.msg[data-sender="huge"]', 'data-length'), '1000000');
  // Tables, labelled code and raw HTML: the markup is text, the javascript: link is text.
  const mdx = '.msg[data-sender="mdx"] .body';
  assert.equal(await count(page, `${mdx} table td`), 2);
  assert.equal(await page.textContent(`${mdx} td >> nth=0`), '<i>x</i>');
  assert.equal(await page.textContent(`${mdx} td >> nth=1`), '[j](javascript:alert(3))');
  assert.equal(await page.getAttribute(`${mdx} td >> nth=1`, 'class'), 'align-right');
  assert.match(await page.textContent(mdx), /<div onclick="alert\(4\)">raw<\/div>/);
  assert.equal(await count(page, `${mdx} i, ${mdx} div[onclick], ${mdx} a`), 0);
  assert.equal(await page.textContent(`${mdx} .code-lang`), 'python');
  assert.equal(await page.textContent(`${mdx} pre code`), 'print("<b>hi</b>")');
  await shot(page, 'demo-hostile.png');

  // Still responsive: typing lands at once.
  const t0 = Date.now();
  await page.fill('#input', 'still responsive', { timeout: 3000 });
  assert.equal(await page.inputValue('#input'), 'still responsive');
  assert.ok(Date.now() - t0 < 3000, `typing took ${Date.now() - t0} ms`);
  await page.click('.msg[data-sender="huge"] .small-btn', { timeout: 3000 });
  await page.fill('#input', 'and after showing 1 MB', { timeout: 3000 });
  assert.deepEqual(problems, []);
});

test('phone width: the sidebar becomes a drawer', async (t) => {
  const { page, problems } = await openApp(t, { width: 375, height: 740 });
  assert.equal(await page.isVisible('#open-sidebar'), true);
  const box = await page.locator('#sidebar').boundingBox();
  assert.ok(box.x + box.width <= 1, 'the sidebar is off-screen');
  await send(page, 'Hello everyone! What should we build today?');
  await page.waitForSelector('.notice-pass', { timeout: 20_000 });
  await idle(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  await shot(page, 'demo-phone.png');
  await page.click('#open-sidebar');
  await page.waitForTimeout(300);
  assert.equal(await page.getAttribute('#open-sidebar', 'aria-expanded'), 'true');
  await shot(page, 'demo-phone-sidebar.png');
  await page.click('#close-sidebar');
  await page.waitForTimeout(300);
  assert.equal(await page.getAttribute('#open-sidebar', 'aria-expanded'), 'false');
  assert.deepEqual(problems, []);
});

test('settings: a real provider key, remembered only when asked; an agent switches provider', async (t) => {
  const { page, problems, consoleText } = await openApp(t);
  const KEY = 'sk-e2e-secret-123';
  const stored = () => page.evaluate(() => localStorage.getItem('agent-world-demo.providers'));
  await page.click('#open-settings');
  await page.selectOption('#settings-provider', 'openai');
  await page.fill('#pf-openai-apiKey', KEY);
  await page.fill('#pf-openai-baseUrl', `${env.demo.mockUrl}/v1`);
  assert.equal(await page.getAttribute('#pf-openai-apiKey', 'type'), 'password');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#settings-dialog', { state: 'hidden' });
  assert.equal(await stored(), null, 'not remembered unless asked');

  // Bob moves to the "real" OpenAI provider (the mock's keyed /v1 route stands in for it).
  await page.click('[aria-label="Edit agent Bob"]');
  await page.selectOption('#agent-provider', 'openai');
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  assert.match(await page.textContent('.agent-item[data-agent-id="bob"] .agent-model'), /mock-bob · openai$/);
  await send(page, '@bob which provider are you on?');
  await page.waitForSelector('.msg.final[data-sender="bob"]', { timeout: 10_000 });
  await idle(page);
  const log = await (await fetch(`${env.demo.mockUrl}/__mock/requests`)).json();
  const last = log.filter((r) => r.body?.model === 'mock-bob').at(-1);
  assert.equal(last.provider, 'openai');
  assert.equal(last.headers.authorization, '***', 'the key was sent (the log masks it)');

  // Remember: stored, and back after a reload; unticked: gone.
  await page.click('#open-settings');
  await page.check('#remember-keys');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#settings-dialog', { state: 'hidden' });
  assert.match(await stored(), new RegExp(KEY));
  await page.reload();
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
  await page.click('#open-settings');
  assert.equal(await page.inputValue('#settings-provider'), 'openai', 'the configured provider is shown first');
  assert.equal(await page.inputValue('#pf-openai-apiKey'), KEY);
  assert.equal(await page.isChecked('#remember-keys'), true);
  await page.uncheck('#remember-keys');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#settings-dialog', { state: 'hidden' });
  assert.equal(await stored(), null);
  assert.ok(!consoleText.some((line) => line.includes(KEY)), 'the key is never logged');
  assert.deepEqual(problems, []);
});

test('settings: a key never lands in the page\'s HTML; unticking "remember" forgets it at once', async (t) => {
  const { page, problems, consoleText } = await openApp(t);
  const KEY = 'sk-e2e-outer-html-456';
  const URL_KEY = 'userinfo-secret-789';
  const stored = () => page.evaluate(() => localStorage.getItem('agent-world-demo.providers'));
  const html = () => page.evaluate(() => document.documentElement.outerHTML);
  await page.click('#open-settings');
  await page.selectOption('#settings-provider', 'anthropic');
  await page.fill('#pf-anthropic-apiKey', KEY);
  // A base URL with credentials in it is refused (fetch would refuse it anyway), and the
  // refusal names the field without echoing the secret.
  await page.fill('#pf-anthropic-baseUrl', `http://user:${URL_KEY}@127.0.0.1:9/v1`);
  await page.check('#remember-keys');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('settings-error').textContent.includes('baseUrl'));
  assert.ok(!(await page.textContent('#settings-error')).includes(URL_KEY), 'the refusal does not echo the secret');
  await page.fill('#pf-anthropic-baseUrl', 'http://127.0.0.1:9/v1');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#settings-dialog', { state: 'hidden' });
  assert.match(await stored(), new RegExp(KEY), 'remembered when asked');

  // Open again: the fields show the settings, but only as the inputs' values, never as
  // `value` attributes in the page's HTML.
  await page.click('#open-settings');
  assert.equal(await page.inputValue('#pf-anthropic-apiKey'), KEY);
  assert.equal(await page.getAttribute('#pf-anthropic-apiKey', 'value'), null);
  for (const secret of [KEY, URL_KEY]) {
    assert.ok(!(await page.$eval('#settings-dialog', (el) => el.outerHTML)).includes(secret), `${secret} in the settings' HTML`);
    assert.ok(!(await html()).includes(secret), `${secret} in the page's HTML`);
  }
  // Unticking forgets the stored settings at once, even if the dialog is then cancelled.
  await page.uncheck('#remember-keys');
  assert.equal(await stored(), null, 'unticking removed the key from localStorage');
  await page.click('#settings-form [data-close]');
  await page.waitForSelector('#settings-dialog', { state: 'hidden' });
  assert.equal(await stored(), null);
  assert.ok(!(await html()).includes(KEY), 'no key in the HTML after closing the dialog');
  // This tab still has the key (in memory); after a reload it is gone.
  await page.click('#open-settings');
  assert.equal(await page.inputValue('#pf-anthropic-apiKey'), KEY);
  assert.equal(await page.isChecked('#remember-keys'), false);
  await page.click('#settings-form [data-close]');
  await page.reload();
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
  await page.click('#open-settings');
  await page.selectOption('#settings-provider', 'anthropic');
  assert.equal(await page.inputValue('#pf-anthropic-apiKey'), '');
  // The risk of "remember" is said next to it.
  assert.match(await page.textContent('#remember-note'), /any script running on this origin can read them/);
  assert.ok(!consoleText.some((line) => line.includes(KEY) || line.includes(URL_KEY)), 'the key is never logged');
  assert.deepEqual(problems, []);
});

test('names and titles with bidi controls cannot spoof what is around them', async (t) => {
  const { page, problems } = await openApp(t);
  const RLO = '\u202E';
  const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;
  await page.click('#new-world');
  await page.fill('#world-name', `${RLO}dlrow`);
  await page.click('#world-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('world-title').textContent.includes('dlrow'));
  await page.click('#add-agent');
  await page.fill('#agent-name', `${RLO}ecila`);
  await page.fill('#agent-model', `mock-${RLO}ledom`);
  await page.fill('#agent-prompt', `mock-reply: hello from ${RLO}ecila`);
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await page.waitForSelector('.agent-item[data-agent-id="ecila"]');
  await send(page, `look at this ${RLO}gnp.exe`);
  await page.waitForSelector('.msg.final[data-sender="ecila"]', { timeout: 20_000 });
  await idle(page);
  // A second chat renamed to a spoofing name, and an error naming the agent.
  await page.click('.chat-item.current [aria-label^="Rename chat"]');
  await page.fill('#ask-input', `photo${RLO}gnp.exe`);
  await page.click('#ask-ok');
  await page.waitForFunction(() => document.querySelector('.chat-item.current .chat-name')?.textContent.startsWith('photo'));
  await page.click('#open-settings');
  await page.check('#debug-toggle');
  await page.click('#settings-form button[type="submit"]');
  await page.waitForSelector('#debug-panel:not([hidden])');
  await page.click('.agent-item[data-agent-id="ecila"] [aria-label^="Edit agent"]');
  await page.selectOption('#agent-provider', 'anthropic');
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await send(page, '@ecila again');
  await page.waitForSelector('.inline-error', { timeout: 10_000 });
  await idle(page);
  await page.fill('#input', '@ec');
  await page.press('#input', 'End');
  await page.type('#input', 'i');
  await page.waitForSelector('#mention-list .mention-opt');
  await shot(page, 'demo-bidi.png');

  const report = await page.evaluate((src) => {
    const bidi = new RegExp(src);
    const isolated = (el) => el.tagName === 'BDI' || ['isolate', 'isolate-override', 'plaintext']
      .includes(getComputedStyle(el).unicodeBidi);
    const where = (el) => {
      const path = [];
      for (let e = el; e && e !== document.body; e = e.parentElement) {
        path.unshift(`${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.classList.length ? `.${[...e.classList].join('.')}` : ''}`);
      }
      return path.join(' > ');
    };
    // Every place a name shows must be an isolating element holding no bidi control.
    const names = {
      'world title': '#world-title bdi', 'chat title': '#chat-title bdi', 'chat list': '.chat-item .chat-name',
      'agent list': '.agent-item .agent-name bdi', 'agent model': '.agent-item .agent-model bdi',
      sender: '.msg[data-sender="ecila"] .who', 'error': '.inline-error strong bdi',
      'routing panel': '#debug-list strong bdi', mention: '#mention-list .mention-model',
    };
    const found = {};
    for (const [what, sel] of Object.entries(names)) {
      const els = [...document.querySelectorAll(sel)];
      found[what] = { count: els.length, isolated: els.every(isolated), controls: els.some((e) => bidi.test(e.textContent)) };
    }
    // No text node outside message bodies (model text, a paragraph of its own) holds a bidi
    // control; the <option>s of the world list neither.
    const leaks = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (bidi.test(n.data) && !n.parentElement.closest('.msg .body, textarea, script')) leaks.push(where(n.parentElement));
    }
    const attrs = [...document.querySelectorAll('[title], [aria-label]')]
      .filter((e) => bidi.test(e.getAttribute('title') ?? '') || bidi.test(e.getAttribute('aria-label') ?? '')).map(where);
    return { found, leaks, attrs, title: document.title,
      agentName: document.querySelector('.agent-item .agent-name bdi')?.textContent,
      chatTitle: document.getElementById('chat-title').textContent };
  }, BIDI.source);

  for (const [what, f] of Object.entries(report.found)) {
    assert.ok(f.count > 0, `no ${what} rendered`);
    assert.ok(f.isolated, `${what} is not isolated`);
    assert.ok(!f.controls, `${what} still holds a bidi control`);
  }
  assert.deepEqual(report.leaks, [], 'text with bidi controls outside an isolated name');
  assert.deepEqual(report.attrs, [], 'attributes with bidi controls');
  assert.doesNotMatch(report.title, BIDI, 'document.title holds a bidi control');
  assert.equal(report.title, 'photognp.exe · agent-world-wasm');
  // The names read in their real order: the agent is "ecila" (its id), not "alice".
  assert.equal(report.agentName, 'ecila');
  assert.equal(report.chatTitle, 'photognp.exe');
  assert.deepEqual(problems, []);
});
