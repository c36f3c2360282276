// The provider × runtime matrix (tests/runtimes/scenario.mjs) in Node 20, through pkg/nodejs.
import { test, before, after } from 'node:test';
import { createRequire } from 'node:module';
import { startMockLlm } from '../mock-llm/server.mjs';
import { runScenario } from './scenario.mjs';
import { assertReport } from './assert-report.mjs';

const require = createRequire(import.meta.url);
const { AgentWorld } = require('../../pkg/nodejs/agent_world_wasm.js');

let mock;
before(async () => { mock = await startMockLlm({ port: 0, delayMs: 0 }); });
after(async () => { await mock?.close(); });

test('matrix: every provider and fault through the engine in Node', { timeout: 120_000 }, async () => {
  const report = await runScenario({ AgentWorld, mockUrl: mock.url });
  assertReport(report, `node ${process.version}`);
});
