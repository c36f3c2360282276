// The provider × runtime matrix (tests/runtimes/scenario.mjs) in Deno, through pkg/web.
// Deno gets read access to pkg/ and tests/ only, and network access to the loopback mock only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startMockLlm } from '../mock-llm/server.mjs';
import { assertReport } from './assert-report.mjs';

const root = new URL('../../', import.meta.url);
let mock;
before(async () => { mock = await startMockLlm({ port: 0, delayMs: 0 }); });
after(async () => { await mock?.close(); });

test('matrix: every provider and fault through the engine in Deno', { timeout: 120_000 }, async () => {
  const deno = new URL('.tools/deno/node_modules/.bin/deno', root).pathname;
  const allowRead = [new URL('pkg/', root).pathname, new URL('tests/', root).pathname].join(',');
  const { stdout } = await promisify(execFile)(deno, ['run', '--quiet', '--no-prompt',
    `--allow-read=${allowRead}`, '--allow-net=127.0.0.1',
    new URL('tests/runtimes/matrix_deno_driver.js', root).pathname, mock.url],
  { timeout: 100_000, maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(stdout.trim().split('\n').pop());
  assert.match(report.runtime, /^deno \d/);
  assertReport(report, report.runtime);
});
