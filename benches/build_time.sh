#!/usr/bin/env bash
# Clean-build time and peak compiler memory of the generated bindings, chromate against
# chromiumoxide_cdp from crates.io, measured in one run on this machine (compare ratios).
#
#   bash benches/build_time.sh
#
# Each crate is built once with its dependencies already compiled, so the figure is the crate
# alone (for chromate: its build script, which runs cdp-gen, plus the crate).
set -euo pipefail
# Both crates are built the way a dependency from crates.io is: without incremental compilation
# (cargo never builds registry crates incrementally; a workspace member otherwise would be).
export CARGO_INCREMENTAL=0
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # label, then the command
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r secs kib < "$work/time"
  printf '%-40s %7.1f s  %6.0f MB peak\n' "$label" "$secs" "$((kib / 1024))"
}

# chromiumoxide_cdp, in a scratch crate with its own target dir.
mkdir -p "$work/oxide/src"
cat > "$work/oxide/Cargo.toml" <<TOML
[package]
name = "oxide-build"
version = "0.0.0"
edition = "2021"
[dependencies]
chromiumoxide_cdp = "=0.9.1"
[workspace]
TOML
echo "" > "$work/oxide/src/lib.rs"
export CARGO_TARGET_DIR="$work/target-oxide"
(cd "$work/oxide" && cargo build -q 2>/dev/null && cargo clean -q -p chromiumoxide_cdp)
measure "chromiumoxide_cdp 0.9.1 (all domains)" cargo build -q --manifest-path "$work/oxide/Cargo.toml"

export CARGO_TARGET_DIR="$work/target-chromate"
cd "$here"
cargo build -q -p chromate --features all-domains && cargo clean -q -p chromate
measure "chromate --features all-domains" cargo build -q -p chromate --features all-domains
cargo clean -q -p chromate
measure "chromate (default features)" cargo build -q -p chromate
cargo build -q --release -p cdp-gen
measure "cdp-gen: generate every domain" "$CARGO_TARGET_DIR/release/cdp-gen" protocol-json/protocol.json -o "$work/cdp.rs"
