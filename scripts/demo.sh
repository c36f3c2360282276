#!/usr/bin/env bash
# `make demo`: installs only what the demo needs (setup.sh --demo), builds the package for the
# web, and serves the demo with the local mock LLM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
source scripts/env.sh
echo "demo: building the package for the web (about a minute the first time)..." >&2
start=$(date +%s)
AWW_WASM_OPT=off build_pkg web &
build=$!
# Progress while it builds: the elapsed time every 10 s.
while kill -0 "$build" 2>/dev/null; do
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    kill -0 "$build" 2>/dev/null || break 2
  done
  echo "demo: still building... $(( $(date +%s) - start )) s" >&2
done
wait "$build"
echo "demo: built in $(( $(date +%s) - start )) s" >&2
exec node scripts/demo-server.mjs --port "${PORT:-$(free_port 8080)}"
