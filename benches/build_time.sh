#!/usr/bin/env bash
# Clean-build time and peak compiler memory of the generated bindings, chromate against
# chromiumoxide_cdp from crates.io, measured in one run on this machine (compare ratios).
#
#   bash benches/build_time.sh
#
# Each crate is built first from an empty target dir (with every dependency, as a user's first
# build), then again alone with its dependencies already compiled (for chromate: its build
# script, which runs cdp-gen, plus the crate).
set -euo pipefail
# Both crates are built the way a dependency from crates.io is: without incremental compilation
# (cargo never builds registry crates incrementally; a workspace member otherwise would be).
export CARGO_INCREMENTAL=0
# The workspace's own debuginfo level, for every crate measured (cargo's default is full).
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
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
(cd "$work/oxide" && cargo fetch -q)
# From an empty target dir: the crate and every dependency, as a user's first build.
measure "chromiumoxide_cdp 0.9.1 with its deps" cargo build -q --manifest-path "$work/oxide/Cargo.toml"
cargo clean -q --manifest-path "$work/oxide/Cargo.toml" -p chromiumoxide_cdp
measure "chromiumoxide_cdp 0.9.1 (all domains)" cargo build -q --manifest-path "$work/oxide/Cargo.toml"

export CARGO_TARGET_DIR="$work/target-chromate"
cd "$here"
cargo fetch -q
measure "chromate (default) with its deps" cargo build -q -p chromate
cargo clean -q -p chromate
measure "chromate --features all-domains" cargo build -q -p chromate --features all-domains
cargo clean -q -p chromate
measure "chromate (default features)" cargo build -q -p chromate
# The generated layer alone, default features: the build script's output and the module that
# includes it, in a scratch crate with only serde and serde_json (the engine is the rest of the
# default build above).
out=$(ls -t "$CARGO_TARGET_DIR"/debug/build/chromate-*/out/cdp.rs | head -1)
mkdir -p "$work/bindings/src"
cat > "$work/bindings/Cargo.toml" <<TOML
[package]
name = "bindings-build"
version = "0.0.0"
edition = "2021"
[dependencies]
serde = "1"
serde_json = { version = "1", features = ["raw_value"] }
[workspace]
TOML
cp Cargo.lock "$work/bindings/"
sed "s|include!(concat!(env!(\"OUT_DIR\"), \"/cdp.rs\"));|include!(\"$out\");|" \
  engine/src/cdp/mod.rs > "$work/bindings/src/lib.rs"
grep -q "include!(\"$out\")" "$work/bindings/src/lib.rs" || { echo "include! not found" >&2; exit 1; }
(cd "$work/bindings" && cargo build -q && cargo clean -q -p bindings-build)
measure "bindings alone (default features)" cargo build -q --manifest-path "$work/bindings/Cargo.toml"
cargo build -q --release -p cdp-gen
measure "cdp-gen: generate every domain" "$CARGO_TARGET_DIR/release/cdp-gen" protocol-json/protocol.json -o "$work/cdp.rs"
