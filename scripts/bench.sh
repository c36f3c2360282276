#!/usr/bin/env bash
# `make bench`: builds what it measures, runs every benchmark part, writes bench/results.json,
# prints the table and puts it in README.md ("Performance"). Separate from `make test`.
# Exits non-zero when a target's gzipped .wasm + JS glue exceeds the README's size budget.
# BENCH_REPS (default 5) sets the repetitions per figure. Raw scratch output: bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
bash scripts/setup.sh
source scripts/env.sh
OUT=bench/out
mkdir -p "$OUT"
REPS=${BENCH_REPS:-5}
TWIGGY_VERSION=0.8.0
: >"$OUT/timings.txt"
cp /proc/loadavg "$OUT/loadavg-start.txt" # bench/report.mjs prints it: a shared machine makes noisy ratios
part() { local s; s=$(date +%s); echo "== bench: $1" >&2; shift; "$@"; echo "$(( $(date +%s) - s )) $*" >>"$OUT/timings.txt"; }

# The bench's own tools, idempotent: hyperfine from Debian, twiggy from the crate registry.
command -v hyperfine >/dev/null 2>&1 \
  || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null; }
twiggy --version 2>/dev/null | grep -qF " $TWIGGY_VERSION" \
  || cargo install --quiet --locked twiggy --version "$TWIGGY_VERSION"

# 1. Builds: the three package targets (release, as shipped), and for twiggy the same release
#    code with names kept: cargo's wasm (already built by wasm-pack) through wasm-bindgen and
#    wasm-opt with the release flags plus -g, so the profile names functions and data.
part "build pkg/ (web, nodejs, bundler)" build_pkg web nodejs bundler
names_build() {
  local flags
  flags=$(node -e 'const m = require("fs").readFileSync("Cargo.toml", "utf8").match(/^wasm-opt = (\[.*\])$/m); console.log(JSON.parse(m[1]).join(" "))')
  wasm-bindgen --target web --out-dir "$OUT/names" target/wasm32-unknown-unknown/release/agent_world_wasm.wasm
  # shellcheck disable=SC2086 # the flags are separate words
  wasm-opt $flags -g "$OUT/names/agent_world_wasm_bg.wasm" -o "$OUT/names/names.wasm"
  twiggy top -f json "$OUT/names/names.wasm" >"$OUT/twiggy-top.json"
  twiggy dominators -r 12 -d 4 -f json "$OUT/names/names.wasm" >"$OUT/twiggy-dominators.json"
  twiggy top -n 20 "$OUT/names/names.wasm" >"$OUT/twiggy-top.txt"
}
part "names build + twiggy" names_build
part "sizes" node bench/size.mjs --targets web,nodejs,bundler --twiggy-top "$OUT/twiggy-top.json" \
  --twiggy-dom "$OUT/twiggy-dominators.json" --names-wasm "$OUT/names/names.wasm" --out "$OUT/size.json"

# 2. Native engine throughput and RAM (cargo's bench profile = the release profile).
part "native engine (cargo bench)" sh -c "cargo bench --quiet --bench engine -- --reps $REPS >$OUT/native.json"

# 3. The mock LLM in its own process on a free loopback port, no pause between frames.
MOCK_PORT=$(free_port 18799)
MOCK_URL="http://127.0.0.1:$MOCK_PORT"
node tests/mock-llm/server.mjs --port "$MOCK_PORT" --delay 0 >"$OUT/mock-llm.log" 2>&1 &
MOCK_PID=$!
trap 'kill $MOCK_PID 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$OUT/mock-llm.log" 2>/dev/null && break; sleep 0.1; done

# 4. Node, then Node's whole-process cold start under hyperfine, then Chromium.
part "node" node bench/node.mjs --mock "$MOCK_URL" --reps "$REPS" --out "$OUT/node.json"
part "hyperfine: node process cold start" hyperfine -N --style none --warmup 2 --runs 10 \
  --export-json "$OUT/hyperfine-node.json" \
  "node bench/coldstart-node.mjs pkg" "node bench/coldstart-node.mjs empty" >/dev/null
part "chromium" node bench/chromium.mjs --mock "$MOCK_URL" --reps "$REPS" --out "$OUT/chromium.json"

# 5. bench/results.json, the table (stdout and README.md); non-zero when over the size budget.
BENCH_SECONDS=$(( $(date +%s) - T0 )) BENCH_NPROC=$(nproc) node bench/report.mjs --out bench/results.json --readme README.md
