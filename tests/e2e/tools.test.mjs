// Ring 5: tools in the demo (issue 13, item 6). Tess in the ready-made Demo World calls the
// page's tools through the mock LLM; each call is a compact card while the reply streams and
// after a reload; a tool that throws shows its error; a fetch that needs approval shows
// Approve / Deny, in the chat and again after a reload. Desktop 1280×800 and phone 390×844;
// screenshots go to test-output/.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { contrastOf } from '../support/contrast.mjs';
import { demoAndBrowser } from '../support/demo-browser.mjs';

const out = new URL('../../test-output/', import.meta.url);
mkdirSync(out, { recursive: true });
const shot = (page, name) => page.screenshot({ path: new URL(name, out).pathname });
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const env = demoAndBrowser();

async function openApp(t, viewport = DESKTOP) {
  const context = await env.browser.newContext({ viewport });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.goto(env.demo.url);
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
  return { page, problems };
}

async function reload(page) {
  await page.reload();
  await page.waitForSelector('#app[data-ready="true"]', { timeout: 20_000 });
}

/** The agent dialog, with the tools ticked (the dialog lists the page's tools). */
async function addAgent(page, { name, model, systemPrompt, tools = [] }) {
  if (await page.isVisible('#open-sidebar')) await page.click('#open-sidebar');
  await page.click('#add-agent');
  await page.fill('#agent-name', name);
  await page.selectOption('#agent-provider', 'openai-compatible');
  await page.fill('#agent-model', model);
  await page.fill('#agent-prompt', systemPrompt);
  for (const tool of tools) await page.check(`#tool-pick-${tool}`);
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await page.waitForSelector(`.agent-item[data-agent-id="${name.toLowerCase()}"]`, { state: 'attached' });
  if (await page.isVisible('#close-sidebar')) await page.click('#close-sidebar');
}

/** Every text of the tool cards and approvals on screen is readable (4.5:1), light and dark. */
async function checkContrast(page, label) {
  for (const scheme of ['light', 'dark']) {
    if ((await page.getAttribute('html', 'data-theme')) !== scheme) await page.click('#theme-toggle');
    for (const sel of ['.tool-name', '.tool-args', '.tool-state', '.tool-label', '.tool-detail pre',
      '.approval-text', '.approval-args', '.approval-outcome', '.approve-btn', '.deny-btn']) {
      for (const r of await contrastOf(page, `.tool-card ${sel}`)) assert.ok(r >= 4.5, `${label} ${sel} in ${scheme}: ${r}:1 < 4.5:1`);
    }
    await shot(page, `tools-${label}-${scheme}.png`);
  }
}

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

async function idle(page, timeout = 20_000) {
  await page.waitForFunction(() => document.getElementById('stop').disabled
    && !document.querySelector('.msg.streaming'), null, { timeout });
}

/** The cards of `sender`'s last reply: [{tool, state, args, result, error, open}]. */
function cards(page, sender) {
  return page.$$eval(`.msg[data-sender="${sender}"]`, (msgs) => {
    const last = msgs[msgs.length - 1];
    return [...(last?.querySelectorAll('.tool-card') ?? [])].map((c) => ({
      tool: c.querySelector('.tool-name').textContent,
      state: c.dataset.state,
      approval: c.dataset.approval ?? null,
      preview: c.querySelector('.tool-args').textContent,
      args: c.querySelector('.tool-args-full')?.textContent ?? null,
      result: c.querySelector('.tool-result')?.textContent ?? null,
      error: c.querySelector('.tool-error')?.textContent ?? null,
      open: c.querySelector('details').open,
    }));
  });
}

for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
  test(`${label}: Tess's tool calls show as cards while the reply streams and after a reload`, async (t) => {
    const { page, problems } = await openApp(t, viewport);
    // The Demo World's fourth agent, with the page's three tools.
    assert.equal(await page.locator('.agent-item[data-agent-id="tess"]').count(), 1);
    // Record every card as it appears: was its reply still streaming (not yet published)?
    await page.evaluate(() => {
      window.seenCards = [];
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (n.nodeType === 1 && n.matches('.tool-card')) {
              window.seenCards.push({ tool: n.dataset.tool, final: n.closest('.msg').classList.contains('final'), state: n.dataset.state ?? null });
            }
          }
        }
      }).observe(document.getElementById('messages'), { childList: true, subtree: true });
    });
    // The empty chat suggests a question for Tess (on the phone, the test takes it).
    const suggestion = page.locator('.empty .suggestion', { hasText: '@tess' });
    assert.equal(await suggestion.textContent(), '@tess what time is it in Paris, and what is 17 × 23?');
    if (viewport === PHONE) await suggestion.click();
    else await send(page, '@tess what time is it in Paris, and what is 17 × 23?');
    await page.waitForSelector('.msg.final[data-sender="tess"]', { timeout: 20_000 });
    await idle(page);
    const seen = await page.evaluate(() => window.seenCards);
    assert.deepEqual(seen.map((s) => s.tool), ['current_time', 'calculator'], JSON.stringify(seen));
    assert.ok(seen.every((s) => !s.final), `the cards came with the stream, before the message was published: ${JSON.stringify(seen)}`);

    const check = async (when) => {
      const list = await cards(page, 'tess');
      assert.deepEqual(list.map((c) => [c.tool, c.state]), [['current_time', 'done'], ['calculator', 'done']], `${when}: ${JSON.stringify(list)}`);
      assert.ok(list.every((c) => !c.open), `${when}: cards start collapsed`);
      assert.equal(list[1].preview, '{"expression":"17 * 23"}');
      assert.deepEqual(JSON.parse(list[1].result), { expression: '17 * 23', value: 391 });
      const time = JSON.parse(list[0].result);
      assert.equal(time.timeZone, 'Europe/Paris');
      assert.match(time.local, /\d{1,2}:\d{2}:\d{2}/);
      // The reply the mock gave once it saw the results: they reached the model.
      const reply = await page.textContent('.msg.final[data-sender="tess"] .body');
      assert.match(reply, /calculator: \{"expression":"17 \* 23","value":391\}/);
    };
    await check('streamed');
    // Opened, a card shows the arguments and the result in full.
    await page.click('.msg[data-sender="tess"] .tool-card[data-tool="calculator"] summary');
    assert.match(await page.textContent('.msg[data-sender="tess"] .tool-card[data-tool="calculator"] .tool-args-full'), /"expression": "17 \* 23"/);
    await shot(page, `tools-cards-${label}.png`);

    await reload(page);
    await page.waitForSelector('.msg.final[data-sender="tess"] .tool-card');
    await check('after a reload');
    await shot(page, `tools-cards-reloaded-${label}.png`);
    assert.deepEqual(problems, []);
  });
}

test('a tool that throws shows its error in the card, and the model is told', async (t) => {
  const { page, problems } = await openApp(t);
  await addAgent(page, {
    name: 'Calc', model: 'mock-calc', tools: ['calculator'],
    systemPrompt: 'mock-tool: calculator {"expression": "2 * (3"}\nmock-reply: The calculator said: {results}',
  });
  await send(page, '@calc what is 2 * (3');
  await page.waitForSelector('.msg.final[data-sender="calc"]', { timeout: 20_000 });
  await idle(page);
  const [card] = await cards(page, 'calc');
  assert.equal(card.state, 'error');
  assert.equal(card.error, 'expected ")" at position 7 of "2 * (3"');
  assert.equal(card.result, null);
  assert.match(await page.textContent('.msg.final[data-sender="calc"] .body'), /calculator: \{"error":"expected "\)" at position 7/);
  await page.click('.msg[data-sender="calc"] .tool-card summary');
  await shot(page, 'tools-error-card.png');
  await reload(page);
  await page.waitForSelector('.msg.final[data-sender="calc"] .tool-card');
  const [again] = await cards(page, 'calc');
  assert.equal(again.state, 'error');
  assert.equal(again.error, card.error);
  assert.deepEqual(problems, []);
});

for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
  test(`${label}: fetch_url asks first: approve, deny, and approve after a reload`, async (t) => {
    const { page, problems } = await openApp(t, viewport);
    // A same-origin, small file: the demo server's config.
    const url = new URL('/demo-config.json', env.demo.url).href;
    await addAgent(page, {
      name: 'Fetcher', model: 'mock-fetcher', tools: ['fetch_url'],
      systemPrompt: `mock-tool: fetch_url {"url": "${url}"}\nmock-reply: Fetched: {results}`,
    });
    const waiting = '.msg[data-sender="fetcher"]:last-of-type .tool-card[data-state="waiting"]';

    // Approve: the tool runs, the reply resumes in the same bubble with the result.
    await send(page, '@fetcher read the demo config');
    await page.waitForSelector(`${waiting} .approve-btn`, { timeout: 20_000 });
    await idle(page); // the world is idle while it waits; the bubble does not look busy
    assert.equal(await page.textContent(`${waiting} .approval-text`), 'Fetcher wants to run fetch_url:');
    // The whole URL, however narrow the screen: it is read before it is approved.
    assert.equal(await page.textContent(`${waiting} .approval-args`), JSON.stringify({ url }));
    assert.equal(await page.locator('.msg.final[data-sender="fetcher"]').count(), 0);
    await shot(page, `tools-approval-${label}.png`);
    await checkContrast(page, `waiting-${label}`);
    await page.click(`${waiting} .approve-btn`);
    await page.waitForSelector('.msg.final[data-sender="fetcher"]', { timeout: 20_000 });
    await idle(page);
    let [card] = await cards(page, 'fetcher');
    assert.equal(card.state, 'done');
    assert.equal(card.approval, 'approved');
    const fetched = JSON.parse(card.result);
    assert.equal(fetched.status, 200);
    assert.equal(fetched.url, url);
    assert.match(fetched.text, /mockBaseUrl/);
    assert.equal(await page.textContent('.msg[data-sender="fetcher"] .approval'), 'Approved');
    assert.match(await page.textContent('.msg.final[data-sender="fetcher"] .body'), /Fetched: fetch_url: \{.*"status":200/);

    // Deny: the tool does not run; the model is told it was denied.
    await send(page, '@fetcher and again');
    await page.waitForFunction(() => document.querySelectorAll('.msg[data-sender="fetcher"]').length === 2
      && document.querySelector('.msg[data-sender="fetcher"]:last-of-type .deny-btn'), null, { timeout: 20_000 });
    await page.click('.msg[data-sender="fetcher"]:last-of-type .deny-btn');
    await page.waitForFunction(() => document.querySelectorAll('.msg.final[data-sender="fetcher"]').length === 2, null, { timeout: 20_000 });
    await idle(page);
    [card] = await cards(page, 'fetcher');
    assert.equal(card.state, 'error');
    assert.equal(card.approval, 'denied');
    assert.equal(card.error, 'denied by the user');
    assert.match(await page.textContent('.msg.final[data-sender="fetcher"]:last-of-type .body'), /fetch_url: \{"error":"denied by the user"\}/);
    await shot(page, `tools-denied-${label}.png`);
    await checkContrast(page, `answered-${label}`);

    // A reload while it waits: the approval comes back from the store and still works.
    await send(page, '@fetcher once more');
    await page.waitForFunction(() => document.querySelectorAll('.msg[data-sender="fetcher"]').length === 3
      && document.querySelector('.msg[data-sender="fetcher"]:last-of-type .approve-btn'), null, { timeout: 20_000 });
    await idle(page);
    await reload(page);
    await page.waitForSelector(`${waiting} .approve-btn`, { timeout: 20_000 });
    assert.equal(await page.locator('.msg.final[data-sender="fetcher"]').count(), 2);
    await shot(page, `tools-approval-reloaded-${label}.png`);
    await page.click(`${waiting} .approve-btn`);
    await page.waitForFunction(() => document.querySelectorAll('.msg.final[data-sender="fetcher"]').length === 3, null, { timeout: 20_000 });
    await idle(page);
    [card] = await cards(page, 'fetcher');
    assert.equal(card.state, 'done');
    assert.match(JSON.parse(card.result).text, /mockBaseUrl/);
    // And it stays answered: after another reload there is nothing to approve.
    await reload(page);
    await page.waitForSelector('.msg.final[data-sender="fetcher"]');
    assert.equal(await page.locator('.approve-btn').count(), 0);
    assert.deepEqual(problems, []);
  });
}

test('a world whose agent lists a tool this page does not offer: a clear error, fixed in the agent dialog', async (t) => {
  const { page, problems } = await openApp(t);
  // A world made elsewhere (another page, an import): its agent lists weather_radar.
  await page.evaluate(async () => {
    const { AgentWorld } = await import('/pkg/web/agent_world_wasm.js');
    const w = await AgentWorld.create({ name: 'Old World', storage: 'indexeddb' });
    await w.addAgent({ name: 'Wendy', provider: 'openai-compatible', model: 'mock-wendy', tools: ['weather_radar', 'current_time'] });
    w.free();
  });
  await reload(page);
  const id = await page.$eval('#world-select', (s) => [...s.options].find((o) => o.textContent === 'Old World').value);
  await page.selectOption('#world-select', id);
  await page.waitForFunction(() => document.getElementById('world-title').textContent.startsWith('Old World'));
  await send(page, 'hello Wendy');
  await page.waitForSelector('.inline-error[data-code="tool_not_registered"]', { timeout: 20_000 });
  assert.match(await page.textContent('.inline-error .err-detail'), /weather_radar/);
  assert.match(await page.textContent('.inline-error .err-hint'), /untick the tools marked “not available on this page”/);
  await idle(page);
  await shot(page, 'tools-not-registered.png');
  // The dialog lists it, ticked, as not available; unticking it fixes the agent.
  await page.click('.agent-item[data-agent-id="wendy"] .icon-btn');
  assert.equal(await page.isChecked('#tool-pick-weather_radar'), true);
  assert.equal(await page.isChecked('#tool-pick-current_time'), true);
  assert.match(await page.textContent('label[for="tool-pick-weather_radar"]'), /not available on this page/);
  await page.uncheck('#tool-pick-weather_radar');
  await page.click('#agent-save');
  await page.waitForSelector('#agent-dialog', { state: 'hidden' });
  await send(page, 'hello again');
  await page.waitForSelector('.msg.final[data-sender="wendy"]', { timeout: 20_000 });
  assert.match(await page.textContent('.msg.final[data-sender="wendy"] .body'), /^Wendy here/);
  assert.deepEqual(problems, []);
});
