# The commands of the README. Each one installs what it needs first (scripts/setup.sh).
.PHONY: demo test bench

## make demo: build the package for the web and serve www/ with a local mock LLM (prints the URL)
demo:
	@bash scripts/demo.sh

## make test: every test ring (native, wasm in Node/Chromium page/worker, JS, e2e, lints)
test:
	@bash scripts/test.sh

## make bench: size, streaming, persistence, routing and cold-start benchmarks → bench/results.json, README table
bench:
	@bash scripts/bench.sh
