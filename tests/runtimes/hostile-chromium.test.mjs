// The JS boundary in Chromium, through the npm package's web build (pkg/npm/web, with its JS
// guard layer): a smaller version of tests/js/garbage.test.mjs (hostile values in every options
// field of the calls that take objects, with health checks), free() during a streaming reply,
// and a trap turning every later call into `internal_error`. See tests/js/reliability.test.mjs
// and tests/js/trap.test.mjs for the Node versions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { launchChromium, serveDir } from '../support/chromium.mjs';

const root = new URL('../../', import.meta.url);
if (!existsSync(new URL('pkg/npm/web/agent_world_wasm.js', root))) {
  throw new Error('pkg/npm is missing: run bash scripts/package.sh first');
}
let server, browser;

before(async () => {
  server = await serveDir(new URL(root).pathname, { only: ['/pkg/npm/'] });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs `fn` in a fresh page with the package's web build initialised as `aww`. */
async function inPage(fn) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${server.url}/pkg/npm/package.json`);
    const result = await page.evaluate(async (source) => {
      const aww = await import('/pkg/npm/web/agent_world_wasm.js');
      await aww.default();
      return (0, eval)(`(${source})`)(aww);
    }, fn.toString());
    return { result, errors };
  } finally {
    await page.close();
  }
}

test('hostile values in every options field: AgentWorldError or success, and the module lives', { timeout: 120_000 }, async () => {
  const { result, errors } = await inPage(async ({ AgentWorld, isAgentWorldError }) => {
    const boom = new Error('boom');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const cyclic = { name: 'c' };
    cyclic.self = cyclic;
    let deep = {};
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    const hostile = {
      undefined, null: null, NaN, Infinity, '-Infinity': -Infinity, BigInt: 10n, symbol: Symbol('s'),
      function: () => 1, 'throwing Proxy': new Proxy({}, { get() { throw boom; }, ownKeys() { throw boom; } }),
      'revoked Proxy': revoked.proxy, 'throwing getter': { get x() { throw boom; } }, cyclic,
      '10,000-deep object': deep, 'lone surrogates': '\uD800x\uDFFF',
      'header chars': 'k\u200Be\u2019y\u0100 \r\n:', '10 MB string': 'x'.repeat(10 * 1024 * 1024),
    };
    let n = 0;
    const answering = async (text) => {
      const w = await AgentWorld.create({ name: `Healthy ${++n}`, storage: 'memory' });
      w.registerProvider({ async *stream() { yield text; } });
      await w.addAgent({ name: 'Probe', provider: 'custom', model: 'm' });
      return w;
    };
    const reply = async (w) => {
      const got = [];
      const off = w.on('message', (m) => m.sender === 'probe' && got.push(m.content));
      await w.send('@probe there?');
      await w.idle();
      off();
      return got.join();
    };
    const old = await answering('old');
    const target = await answering('target');
    const calls = {
      create: [{ name: 'N', description: 'd', turnLimit: 3, historyLimit: 5, storage: 'memory', debug: false },
        (o) => AgentWorld.create(o)],
      addAgent: [{ name: 'A', provider: 'custom', model: 'm', systemPrompt: 's', temperature: 0.5, maxTokens: 9 },
        (o) => target.addAgent(o)],
      updateAgent: [{ systemPrompt: 's', temperature: 0.5, maxTokens: 9, stream: true },
        (o) => target.updateAgent('probe', o)],
      update: [{ description: 'd', turnLimit: 3, historyLimit: 5 }, (o) => target.update(o)],
      configureProvider: [{ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', headers: { a: 'b' } },
        (o) => target.configureProvider('openai', o)],
      send: [{ sender: 'HUMAN' }, (o) => target.send('hi', o)],
    };
    const bad = [];
    let probes = 0;
    for (const [name, [base, call]] of Object.entries(calls)) {
      for (const field of [null, ...Object.keys(base)]) {
        for (const [label, value] of Object.entries(hostile)) {
          probes++;
          const options = field === null ? value : { ...base, [field]: value };
          if (name === 'create' && field !== 'name' && field !== null) options.name = `N ${++n}`;
          try {
            await call(options);
          } catch (e) {
            if (!isAgentWorldError(e) || e.code === 'internal_error') {
              bad.push(`${name} ${field} ${label}: ${e?.name} ${e?.code} ${e?.message}`);
            }
          }
        }
      }
      const fresh = await answering('fresh');
      if (await reply(fresh) !== 'fresh') bad.push(`a fresh world failed after ${name}`);
      if (await reply(old) !== 'old') bad.push(`the old world failed after ${name}`);
      fresh.free();
    }
    // The probes' own messages may still be answered in the background: let them finish, so
    // that the last check counts only the reply to its own message.
    await target.idle();
    target.registerProvider({ async *stream() { yield 'target'; } });
    await target.updateAgent('probe', { systemPrompt: null, temperature: null, maxTokens: null });
    return { bad, probes, target: await reply(target) };
  });
  assert.deepEqual(errors, [], 'no uncaught page errors');
  assert.deepEqual(result.bad, []);
  assert.ok(result.probes > 300, `${result.probes} probes`);
  assert.equal(result.target, 'target');
});

test('free() during a streaming reply aborts it; later calls reject with world_closed', { timeout: 60_000 }, async () => {
  const { result, errors } = await inPage(async ({ AgentWorld }) => {
    const world = await AgentWorld.create({ name: 'Free', storage: 'memory' });
    let aborted = false;
    let streaming;
    const started = new Promise((resolve) => { streaming = resolve; });
    world.registerProvider({
      async *stream(_r, { signal }) {
        yield 'partial';
        streaming();
        await new Promise((resolve) => signal.addEventListener('abort', () => { aborted = true; resolve(); }));
      },
    });
    await world.addAgent({ name: 'Slow', provider: 'custom', model: 'm' });
    await world.send('@slow go');
    const idle = world.idle();
    await started;
    world.free();
    await idle;
    world.free();
    const code = await world.send('again').then(() => 'sent', (e) => e.code);
    return { aborted, code };
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(result, { aborted: true, code: 'world_closed' });
});

test('after a trap every call fails at once with internal_error', { timeout: 60_000 }, async () => {
  const { result } = await inPage(async ({ AgentWorld, version, isAgentWorldError }) => {
    const world = await AgentWorld.create({ name: 'Trap', storage: 'memory' });
    world.registerProvider({ async *stream() { yield 'x'; await new Promise(() => {}); } });
    await world.addAgent({ name: 'Slow', provider: 'custom', model: 'm' });
    await world.send('@slow go');
    const pending = world.idle().then(() => 'resolved', (e) => e.code);
    const victim = await AgentWorld.create({ name: 'Victim', storage: 'memory' });
    victim.__wbg_ptr = 0xfffffff0; // outside the wasm memory: the next call traps
    let trap;
    try { victim.info(); } catch (e) { trap = e; }
    const codes = [];
    for (const call of [() => version(), () => world.info()]) {
      try { call(); codes.push('returned'); } catch (e) { codes.push(e.code); }
    }
    codes.push(await world.send('x').then(() => 'sent', (e) => e.code));
    codes.push(await AgentWorld.create({ name: 'After', storage: 'memory' }).then(() => 'created', (e) => e.code));
    return {
      trap: isAgentWorldError(trap) && trap.code,
      message: trap?.message,
      cause: trap?.cause instanceof WebAssembly.RuntimeError,
      pending: await Promise.race([pending, new Promise((r) => setTimeout(r, 5000, 'still pending'))]),
      codes,
    };
  });
  assert.deepEqual(result, {
    trap: 'internal_error',
    message: 'the engine stopped after an internal error; reload the page',
    cause: true,
    pending: 'internal_error',
    codes: ['internal_error', 'internal_error', 'internal_error', 'internal_error'],
  });
});
