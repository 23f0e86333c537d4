#!/usr/bin/env bash
# `npm install` of chromate's packed tarballs (.ci/dist.sh build) beside agent-browser and
# @playwright/mcp, one after the other in one run: each into an empty directory with an empty
# npm cache of its own (so every byte comes from the registry, or from our tarball files),
# without install scripts (agent-browser's postinstall is not run) and with browser downloads
# skipped. Prints the wall time and the bytes on disk of node_modules (du -sb), then deletes
# everything it made.
#   bash .ci/dist.sh build && bash benches/npm_install.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
dist=$root/target/dist
for tarball in "$dist/chromate-mcp-$version.tgz" "$dist/chromate-mcp-linux-x64-$version.tgz"; do
  [ -f "$tarball" ] || { echo "no $tarball: run .ci/dist.sh build first" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 AGENT_BROWSER_SKIP_DOWNLOAD=1

measure() { # LABEL PACKAGE...
  local label=$1 dir=$tmp/install
  shift
  rm -rf "$dir" && mkdir -p "$dir" && echo '{"private": true}' >"$dir/package.json"
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts --cache "$tmp/cache-$label" "$@")
  end=$(date +%s.%N)
  local bytes
  bytes=$(du -sb "$dir/node_modules" | cut -f1)
  python3 -c 'import sys; label, start, end, size = sys.argv[1:]; print(f"| {label} | {float(end) - float(start):.1f} s | {int(size):,} B ({int(size) / 1e6:.1f} MB) |")' \
    "$label" "$start" "$end" "$bytes"
  rm -rf "$dir" "$tmp/cache-$label"
}

echo "| package | npm install | node_modules on disk |"
echo "|---|---:|---:|"
measure "chromate-mcp $version (our two tarballs)" "$dist/chromate-mcp-$version.tgz" "$dist/chromate-mcp-linux-x64-$version.tgz"
measure "agent-browser 0.41.2" agent-browser@0.41.2
measure "@playwright/mcp 0.0.83" @playwright/mcp@0.0.83
