// What the README's quick start must print (tests/js/readme.test.mjs runs it from the source
// tree, tests/package/quickstart.test.mjs from the packed tarball), against the mock LLM.
import assert from 'node:assert/strict';

export function assertQuickStartOutput(stdout) {
  const first = 'Should we rewrite our backend in Rust?';
  const second = '@bob, what is the biggest risk?';
  const lines = stdout.split('\n').filter((l) => l.startsWith('['));
  const about = (l, q) => l.includes(`About "${q}"`);
  assert.equal(lines[0], `[HUMAN] ${first}`, stdout);
  // Both answer the public message; only Bob answers the one addressed to him.
  assert.equal(lines.filter((l) => l.startsWith('[alice]') && about(l, first)).length, 1, stdout);
  assert.equal(lines.filter((l) => l.startsWith('[bob]') && about(l, first)).length, 1, stdout);
  assert.ok(lines.includes(`[HUMAN] ${second}`), stdout);
  assert.equal(lines.filter((l) => about(l, second)).length, 1, stdout);
  assert.ok(lines.at(-1).startsWith('[bob]') && about(lines.at(-1), second), stdout);
  assert.equal(lines.filter((l) => l.startsWith('[alice]')).length, 1, stdout);
  // The replies streamed: the chunks were printed before each final line.
  assert.ok(stdout.split('\n').some((l) => l.includes('here. About') && !l.startsWith('[')), stdout);
}
