#!/usr/bin/env bash
# `make test`: sets the machine up, then runs every test ring. Stops at the first failing ring.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
bash scripts/setup.sh
source scripts/env.sh
ring() { local s; s=$(date +%s); echo "== $1" >&2; shift; "$@"; echo "== ok in $(( $(date +%s) - s ))s" >&2; }

ring "purity of src/core" bash scripts/check-purity.sh
ring "rustfmt" cargo fmt --check
ring "clippy (host)" cargo clippy --quiet --all-targets -- -D warnings
ring "clippy (wasm32)" cargo clippy --quiet --all-targets --target wasm32-unknown-unknown -- -D warnings
# Doc comments are read by whoever works on the crate: a link that no longer resolves fails.
ring "rustdoc -D warnings (host, wasm32)" env RUSTDOCFLAGS="-D warnings" sh -c \
  'cargo doc --quiet --no-deps --lib && cargo doc --quiet --no-deps --lib --target wasm32-unknown-unknown'
ring "native cargo test (core)" cargo test --quiet

# The local mock LLM every network test talks to (127.0.0.1 only).
MOCK_PORT=$(free_port 18788)
export AWW_MOCK_URL="http://127.0.0.1:$MOCK_PORT"
node tests/mock-llm/server.mjs --port "$MOCK_PORT" >target/mock-llm.log 2>&1 &
MOCK_PID=$!
trap 'kill $MOCK_PID 2>/dev/null || true' EXIT
# A third-party mock LLM (@copilotkit/aimock, a devDependency) that the wasm rings also talk
# to, so the codecs are checked against a server we did not write (tests/aimock/).
AIMOCK_PORT=$(free_port 18790)
export AWW_AIMOCK_URL="http://127.0.0.1:$AIMOCK_PORT"
node node_modules/@copilotkit/aimock/dist/cli.js --host 127.0.0.1 --port "$AIMOCK_PORT" \
  --fixtures tests/aimock/fixtures.json --log-level warn >target/aimock.log 2>&1 &
AIMOCK_PID=$!
trap 'kill $MOCK_PID $AIMOCK_PID 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening target/mock-llm.log 2>/dev/null && break; sleep 0.1; done
for _ in $(seq 100); do curl -sf "$AWW_AIMOCK_URL/health" >/dev/null 2>&1 && break; sleep 0.1; done

# The runner's default of 20 s per browser test is tight on a shared 2-core machine: the
# IndexedDB suite pages through 10,000 stored messages. A hung test still fails, after 180 s.
export WASM_BINDGEN_TEST_TIMEOUT=180 WASM_BINDGEN_TEST_DRIVER_TIMEOUT=60
ring "wasm-bindgen-test: Node, Chromium page, Chromium worker" \
  cargo test --target wasm32-unknown-unknown
ring "build pkg/ (web, nodejs)" build_pkg web nodejs
ring "npm package (pkg/npm)" bash scripts/package.sh
echo "== JS tests (node:test): package, runtimes (Deno, workerd), mock LLM, demo e2e in Chromium," \
  "the packed tarball in every runtime and a fresh Vite project" >&2
node --test --test-concurrency=1 tests/js/ tests/runtimes/ tests/mock-llm/ tests/e2e/ tests/package/
echo "== all rings passed in $(( $(date +%s) - T0 ))s" >&2
