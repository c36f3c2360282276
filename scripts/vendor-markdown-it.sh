#!/usr/bin/env bash
# Refreshes www/vendor/markdown-it.mjs, the markdown parser of the demo, from the npm registry.
# The demo is a static page with no bundler: it imports markdown-it's own self-contained browser
# ES module build (dist/browser/markdown-it.esm.min.mjs: no imports, no eval, so it runs under
# the page's CSP), committed with the licences of markdown-it and of what it bundles. `make demo`
# and the tests need no npm package for it. Run this by hand to move to another version.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:-15.0.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "markdown-it@$VERSION" >/dev/null
src="$tmp/node_modules/markdown-it/dist/browser/markdown-it.esm.min.mjs"
if grep -qE '^import |new Function|\beval\(' "$src"; then
  echo "vendor: markdown-it $VERSION's browser build imports or evaluates code: not usable as is" >&2
  exit 1
fi
# The source map is not vendored: drop the comment that points at it.
grep -v '^//# sourceMappingURL=' "$src" > www/vendor/markdown-it.mjs
{
  for pkg in markdown-it entities linkify-it mdurl uc.micro punycode.js; do
    dir="$tmp/node_modules/$pkg"
    echo "==== $pkg $(node -p "require('$dir/package.json').version") ($(node -p "require('$dir/package.json').license"))"
    cat "$dir"/LICENSE* 2>/dev/null || echo "(no licence file in the package; licence: see above)"
    echo
  done
} > www/vendor/markdown-it.LICENSE
echo "vendor: www/vendor/markdown-it.mjs is markdown-it $VERSION ($(wc -c < www/vendor/markdown-it.mjs) bytes)" >&2
