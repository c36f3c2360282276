#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 machine that reaches only the
# package registries (no GitHub release downloads). Idempotent and quiet when all is present.
# Called by `make test` and `make bench`; safe to run by hand.
#
# `setup.sh --demo` (what `make demo` runs) installs only what building and serving the demo
# needs: the wasm target, wasm-pack and wasm-bindgen-cli. No Chromium, no Deno, no npm package
# at all (no `npm ci` of the test tools: workerd, Vite, the provider SDKs, binaryen: 413 MB, and
# 92 MB of Deno): the demo's build skips wasm-opt, and markdown-it is vendored in www/vendor/.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=all
if [ "${1:-}" = "--demo" ]; then MODE=demo; fi

# The CLI must equal the wasm-bindgen crate in Cargo.lock (Cargo.toml pins it with `=`).
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
WASM_PACK_VERSION=0.15.1
export DEBIAN_FRONTEND=noninteractive
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

step() { local s; s=$(date +%s); echo "setup: $*..." >&2; "$@"; echo "setup: $(( $(date +%s) - s ))s: $*" >&2; }
have() { command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -qF " $2"; }

# 1. The wasm target for the installed stable toolchain.
rustup target list --installed | grep -qx wasm32-unknown-unknown \
  || step rustup target add wasm32-unknown-unknown
if [ "$MODE" = all ]; then
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || step rustup component add clippy
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || step rustup component add rustfmt
fi

# 2. Debian's Chromium and its matching ChromeDriver for the browser rings (not for the demo).
if [ "$MODE" = all ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; }; then
  step apt-get update -qq
  step apt-get install -y -qq chromium chromium-driver >/dev/null
fi
# Debian bookworm's binaryen 108 produces modules that die at init(); wasm-pack would find its
# wasm-opt on PATH. npm's binaryen (package.json) is the one we use.
if dpkg -s binaryen >/dev/null 2>&1; then step apt-get remove -y -qq binaryen >/dev/null; fi

# 3. wasm-pack and wasm-bindgen-cli, built from the crate registry.
have wasm-pack "$WASM_PACK_VERSION" \
  || step cargo install --quiet wasm-pack --version "$WASM_PACK_VERSION" --locked
# No --locked: its lockfile wants a webpki-roots release the registry does not serve.
have wasm-bindgen "$WASM_BINDGEN_VERSION" \
  || step cargo install --quiet --force wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"

# The demo needs nothing from npm: it is built without wasm-opt (scripts/demo.sh).
if [ "$MODE" = demo ]; then exit 0; fi

# 4. Deno, from its npm package but outside package-lock.json: the registry reachable here
#    serves only this platform's Deno binary, so npm cannot record the other platforms'
#    optional packages and `npm ci` would reject the lockfile.
DENO_VERSION=2.9.6
if ! .tools/deno/node_modules/.bin/deno --version 2>/dev/null | grep -qF "deno $DENO_VERSION "; then
  step npm install --prefix .tools/deno --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error "deno@$DENO_VERSION" >/dev/null
fi

# 5. JS tools (binaryen's wasm-opt, playwright-core, deno, miniflare, ...) at the locked versions.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
