// JS tools in a Chromium page (pkg/web, IndexedDB storage): the browser's AbortController,
// setTimeout and JSON.stringify behind the tool executor, and the tool data through the
// IndexedDB store (the published toolCalls read back after reopening). tests/js/tools.test.mjs
// has the same cases and more in Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, serveDir } from '../support/chromium.mjs';

const root = new URL('../../', import.meta.url);
let server, browser;

before(async () => {
  server = await serveDir(new URL(root).pathname, { only: ['/pkg/web/'] });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('a tool-using reply, a timed-out tool and stop() in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${server.url}/pkg/web/agent_world_wasm.js`);
    const report = await page.evaluate(async () => {
      const mod = await import('/pkg/web/agent_world_wasm.js');
      await mod.default();
      const { AgentWorld } = mod;
      const world = await AgentWorld.create({ name: `Tools ${Math.random()}` });
      const requests = [];
      world.registerProvider({
        async *stream(request) {
          requests.push(request);
          const last = request.messages.at(-1);
          if (last.role === 'tool') { yield `got ${request.messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' ')}`; return; }
          yield { toolCalls: [{ id: 'a', name: 'add', args: { x: 2, y: 3 } }, { id: 'b', name: 'hang', args: {} }] };
        },
      });
      const contexts = [];
      world.registerTool({ name: 'add', description: 'x + y',
        parameters: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
        execute: ({ x, y }, ctx) => { contexts.push(ctx); return { sum: x + y }; } });
      let hangSignal;
      world.registerTool({ name: 'hang', description: 'never answers', parameters: { type: 'object' }, timeoutMs: 30,
        execute: (_a, { signal }) => { hangSignal = signal; return new Promise(() => {}); } });
      await world.addAgent({ name: 'Calc', provider: 'custom', model: 'm', tools: ['add', 'hang'] });
      const events = [];
      world.on('sse', (e) => events.push(e.type));
      world.on('system', (e) => e.type === 'step-finish' && events.push(`step-finish${e.step}`));
      await world.send('2 + 3?');
      await world.idle();
      const [reply] = (await world.messages(world.currentChat().id)).filter((m) => m.sender === 'calc');
      const reopened = await AgentWorld.open(world.id);
      const [stored] = (await reopened.messages(reopened.currentChat().id)).filter((m) => m.sender === 'calc');

      // stop() aborts a running tool's signal.
      world.unregisterTool('hang');
      let stopSignal;
      world.registerTool({ name: 'hang', description: 'waits', parameters: { type: 'object' },
        execute: (_a, { signal }) => { stopSignal = signal; return new Promise(() => {}); } });
      await world.send('again');
      for (let i = 0; i < 200 && !stopSignal; i++) await new Promise((r) => setTimeout(r, 5));
      world.stop();
      await world.idle();
      await AgentWorld.delete(world.id);
      return {
        events, content: reply.content, toolCalls: reply.toolCalls, stored: stored.toolCalls,
        context: { agentName: contexts[0].agentName, signal: contexts[0].signal instanceof AbortSignal,
          toolCallId: contexts[0].toolCallId },
        hangAborted: hangSignal.aborted, stopAborted: stopSignal?.aborted,
        offered: requests[0].tools.map((t) => t.name),
      };
    });
    assert.deepEqual(errors, []);
    assert.deepEqual(report.events, ['start', 'tool-call', 'tool-call', 'tool-result', 'tool-result',
      'step-finish1', 'chunk', 'step-finish2', 'end', 'start', 'tool-call', 'tool-call', 'tool-result',
      'tool-result', 'error']);
    assert.deepEqual(report.offered, ['add', 'hang']);
    assert.deepEqual(report.context, { agentName: 'calc', signal: true, toolCallId: 'a' });
    assert.equal(report.content, 'got {"sum":5} {"error":"timed out after 0.03 s"}');
    assert.deepEqual(report.toolCalls, [
      { toolCallId: 'a', toolName: 'add', args: { x: 2, y: 3 }, result: { sum: 5 } },
      { toolCallId: 'b', toolName: 'hang', args: {}, error: 'timed out after 0.03 s' },
    ]);
    assert.deepEqual(report.stored, report.toolCalls, 'IndexedDB kept the calls');
    assert.equal(report.hangAborted, true, 'the timeout aborted the tool signal');
    assert.equal(report.stopAborted, true, 'stop() aborted the tool signal');
  } finally {
    await page.close();
  }
});
