#!/usr/bin/env bash
# Assembles the publishable npm package into pkg/npm/ (scripts/package.mjs says what goes where)
# from the wasm-pack targets in pkg/web and pkg/nodejs, building them first when missing.
# `npm pack pkg/npm` makes the tarball; tests/package/ checks it and runs it in every runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# package.mjs reads the glue as the glue step left it, which build_pkg keeps in target/glue/.
[ -f target/glue/web/agent_world_wasm.js ] && [ -f target/glue/nodejs/agent_world_wasm.js ] || build_pkg web nodejs
node scripts/package.mjs
