#!/usr/bin/env bash
# The purity rule (ARCHITECTURE.md): src/core knows nothing of JavaScript, fetch, IndexedDB,
# clocks or randomness. Fails, naming file and line, when anything under src/core uses them.
# The second guard is structural: the wasm-only crates are target-specific dependencies, so the
# host build of the crate (`cargo test`) cannot compile a core that uses them.
set -euo pipefail
cd "$(dirname "$0")/.."
core=${1:-src/core}
pattern='wasm_bindgen|js_sys|web_sys|\bgloo|indexed_db_futures|serde_wasm_bindgen|Instant::now|SystemTime::now|std::time::(Instant|SystemTime)|\buuid::|\bgetrandom\b|\brand::|thread_rng|RandomState|spawn_local'
if hits=$(grep -rnE "$pattern" "$core" --include='*.rs'); then
  echo "purity: src/core must not use JS, web, clock or randomness APIs; found:" >&2
  echo "$hits" >&2
  exit 1
fi
# The host dependency graph of the library must not contain the wasm-only crates.
if cargo tree -e normal --prefix none --target "$(rustc -vV | sed -n 's/^host: //p')" 2>/dev/null \
    | grep -qE '^(wasm-bindgen|js-sys|web-sys|gloo|indexed_db_futures) '; then
  echo "purity: a wasm-only crate became a host dependency (check Cargo.toml target sections)" >&2
  exit 1
fi
echo "purity: src/core is pure"
