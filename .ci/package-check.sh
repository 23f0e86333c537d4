#!/usr/bin/env bash
# The published crates (cdp-gen, chromate, chromate-mcp-client, chromate-command, chromate-flows, chromate-mcp): lists what each package holds
# (`cargo package --list`) and fails on a file no rule expects, on a large one, or on a missing
# README, license or bundled data; then `cargo publish --dry-run --workspace`, which packages
# and builds the six in dependency order as crates.io would see them (publish = false crates
# are skipped). Run by .ci/test.sh after .ci/setup.sh (axe-core must be installed: the engine's
# package carries it).
set -euo pipefail
cd "$(dirname "$0")/.."
max_bytes=$((256 * 1024))
n_bad=0

# check CRATE DIR REGEX LARGE_OK... : every listed file matches REGEX; only LARGE_OK files may
# exceed max_bytes (and 4 MB at most); every LARGE_OK file and the README and licenses exist.
check() {
  local crate=$1 dir=$2 regex=$3
  shift 3
  local listed
  listed=$(cargo package --list --allow-dirty -q -p "$crate")
  for required in README.md LICENSE-MIT LICENSE-APACHE "$@"; do
    grep -qx -- "$required" <<<"$listed" || { echo "package $crate: $required is missing" >&2; n_bad=$((n_bad + 1)); }
  done
  while read -r file; do
    case "$file" in .cargo_vcs_info.json | Cargo.lock | Cargo.toml | Cargo.toml.orig) continue ;; esac
    if ! grep -qE "$regex" <<<"$file"; then
      echo "package $crate: unexpected file $file" >&2; n_bad=$((n_bad + 1)); continue
    fi
    local size limit=$max_bytes
    size=$(stat -L -c %s "$dir/$file")
    for large in "$@"; do [ "$file" = "$large" ] && limit=$((4 * 1024 * 1024)); done
    if [ "$size" -gt "$limit" ]; then
      echo "package $crate: $file is $size bytes (limit $limit)" >&2; n_bad=$((n_bad + 1))
    fi
  done <<<"$listed"
  echo "package $crate: $(grep -c '' <<<"$listed") files checked"
}

check cdp-gen cdp-gen \
  '^(README\.md|LICENSE-(MIT|APACHE)|src/.+\.rs|tests/golden\.rs|tests/mini_protocol\.json|tests/expected/[^/]+\.txt)$'
check chromate engine \
  '^(README\.md|LICENSE-(MIT|APACHE)|build\.rs|protocol\.json|src/.+\.(rs|js)|src/page/testdata/[^/]+\.(json|md)|examples/[^/]+\.rs|axe/package(-lock)?\.json|axe/node_modules/axe-core/(axe\.min\.js|LICENSE))$' \
  protocol.json axe/node_modules/axe-core/axe.min.js axe/node_modules/axe-core/LICENSE
check chromate-mcp-client mcp/client \
  '^(README\.md|LICENSE-(MIT|APACHE)|src/.+\.rs)$'
check chromate-command mcp/command \
  '^(README\.md|LICENSE-(MIT|APACHE)|src/.+\.(rs|html))$'
check chromate-flows mcp/flows \
  '^(README\.md|LICENSE-(MIT|APACHE)|src/.+\.rs)$'
check chromate-mcp mcp \
  '^(README\.md|LICENSE-(MIT|APACHE)|src/.+\.(rs|md))$'
[ "$n_bad" -eq 0 ] || { echo "package check: $n_bad problems" >&2; exit 1; }

echo "== cargo publish --dry-run --workspace (packages and builds cdp-gen, chromate, chromate-mcp-client, chromate-command, chromate-flows, chromate-mcp)"
# The dry run puts the packages in a local registry (target/package/tmp-registry) and unpacks
# them under $CARGO_HOME/registry/src/-<hash of that path>/. Cargo never unpacks a name and
# version it has unpacked once, so a second run from the same checkout path would build the
# first run's sources (CI failed so: its clone built a chromate from hours before). Clear our
# own crates from those unnamed registries first; crates.io's sources are left alone.
for unpacked in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{cdp-gen,chromate,chromate-mcp-client,chromate-command,chromate-flows,chromate-mcp}-[0-9]*; do
  [ -d "$unpacked" ] && rm -rf -- "$unpacked"
done
cargo publish --dry-run --workspace --allow-dirty -q
version=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "chromate"))')
# The engine's protocol.json is a symlink in the repository; the package holds the file itself.
cmp protocol-json/protocol.json "target/package/chromate-$version/protocol.json"
echo "package check: ok"
