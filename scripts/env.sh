# Sourced by the project's scripts: the tool paths every step relies on.
# npm's wasm-opt (binaryen) must come first on PATH: wasm-pack runs the first one it finds.
export PATH="$PWD/node_modules/.bin:$PWD/.tools/deno/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# A free loopback port: $1 if free, else one the kernel picks.
free_port() {
  python3 - "$1" <<'PY'
import socket, sys
want = int(sys.argv[1])
s = socket.socket()
try:
    s.bind(("127.0.0.1", want))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# Builds the npm package's targets into pkg/ (web for pages and workers, nodejs for Node).
# AWW_WASM_OPT=off skips wasm-opt and the JS minifier (`make demo`: no binaryen or
# rolldown to install; a bigger .wasm and JS, served locally, are no matter there).
# Everything else, and what is published, is optimised.
build_pkg() {
  local t opt=()
  [ "${AWW_WASM_OPT:-on}" = off ] && opt=(--no-opt)
  for t in "$@"; do
    # wasm-pack leaves an earlier build's snippet files in place: a stale `inlineN.js` would
    # ship in the package and count in the bench's size figure.
    rm -rf "pkg/$t/snippets"
    wasm-pack --quiet build --release "${opt[@]}" --target "$t" --out-dir "pkg/$t" --out-name agent_world_wasm >/dev/null \
      || { echo "build: wasm-pack --target $t failed" >&2; return 1; }
    node scripts/glue-step.mjs "pkg/$t" || return 1
    if [ "${AWW_WASM_OPT:-on}" = off ]; then
      node scripts/minify.mjs "pkg/$t" --copy-only || return 1
    else
      node scripts/minify.mjs "pkg/$t" || return 1
    fi
  done
}
