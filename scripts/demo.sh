#!/usr/bin/env bash
# `make demo`: sets the machine up, builds the package for the web and serves the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
echo "building the package for the web..." >&2
build_pkg web
exec node scripts/demo-server.mjs --port "${PORT:-$(free_port 8080)}"
