#!/usr/bin/env bash
# Release builds: the commands .github/workflows/release.yml runs, and what .ci/test.sh checks.
#   .ci/dist.sh build [TARGET]  the release binary (cargo build --profile ship --locked -p chromate-mcp
#                               --features tls: https:// model providers and wss:// browser pools,
#                               docs/llm.md#tls; with --target TARGET when given: the release profile's stripped
#                               build with fat LTO and one codegen unit, Cargo.toml says why),
#                               then in target/dist/: the archive chromate-VERSION-TARGET.tar.gz
#                               with its .sha256, and the npm tarballs of the
#                               wrapper (chromate-mcp) and of this platform's package
#   .ci/dist.sh test [TARGET]   the binary is at most 10 MB (x86_64 Linux); copied alone to an
#                               empty directory outside the repository it audits a fixture page
#                               (browser_a11y through the command line) and finds its violations;
#                               then the npm tarballs installed
#                               into an empty directory run `npx chromate-mcp mcp` under the
#                               TypeScript MCP SDK client (tests/clients/client.mjs)
# The packages' versions must be the workspace's. axe-core must be installed (.ci/setup.sh):
# a release build embeds it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:?usage: .ci/dist.sh build|test [TARGET]}
dist=$root/target/dist
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
host=$(rustc -vV | sed -n 's/^host: //p')
target=${2:-$host}

# The npm platform of a Rust target.
npm_platform() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64 ;;
    aarch64-unknown-linux-gnu) echo linux-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    *) echo "dist: no npm package for the target $1" >&2; return 1 ;;
  esac
}
platform=$(npm_platform "$target")
exe=chromate
if [ "$target" = "$host" ] && [ -z "${2:-}" ]; then bin=$root/target/ship/$exe
else bin=$root/target/$target/ship/$exe; fi

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

# The committed package.json files carry the workspace version.
for manifest in npm/*/package.json; do
  grep -q "\"version\": \"$version\"" "$manifest" || { echo "dist: $manifest is not version $version" >&2; exit 1; }
  if grep -q '"optionalDependencies"' "$manifest" && grep -E '"chromate-mcp-[a-z0-9-]+": "' "$manifest" | grep -vq "\"$version\""; then
    echo "dist: $manifest's platform packages are not all version $version" >&2; exit 1
  fi
done

build() {
  [ -f engine/axe/node_modules/axe-core/axe.min.js ] \
    || { echo "dist: axe-core is not installed (bash .ci/setup.sh browser); a release build embeds it" >&2; exit 1; }
  # Linux arm64 from an x64 host: linking and ring's C and assembly (TLS) need the target's
  # toolchain.
  if [ "$target" = aarch64-unknown-linux-gnu ] && [ "$host" != "$target" ]; then
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER:-aarch64-linux-gnu-gcc}
    export CC_aarch64_unknown_linux_gnu=${CC_aarch64_unknown_linux_gnu:-aarch64-linux-gnu-gcc}
  fi
  if [ -n "${2:-}" ]; then cargo build --profile ship --locked -p chromate-mcp --features tls --target "$target"
  else cargo build --profile ship --locked -p chromate-mcp --features tls; fi
  rm -rf "$dist" && mkdir -p "$dist/npm"
  local licenses=(LICENSE-MIT LICENSE-APACHE)
  local name=chromate-$version-$target
  mkdir "$dist/$name"
  cp "$bin" README.md "${licenses[@]}" "$dist/$name/"
  cp engine/axe/node_modules/axe-core/LICENSE "$dist/$name/LICENSE-axe-core"
  (
    cd "$dist"
    tar -czf "$name.tar.gz" "$name" && sha256 "$name.tar.gz" >"$name.tar.gz.sha256"
    rm -rf "$name"
  )
  # The npm packages, staged beside the committed manifests (with the licenses), then packed.
  cp -R npm/chromate-mcp "$dist/npm/chromate-mcp"
  cp "${licenses[@]}" "$dist/npm/chromate-mcp/"
  local staged=$dist/npm/chromate-mcp-$platform
  cp -R "npm/chromate-mcp-$platform" "$staged"
  mkdir "$staged/bin"
  cp "$bin" "$staged/bin/$exe"
  cp "${licenses[@]}" "$staged/"
  cp engine/axe/node_modules/axe-core/LICENSE "$staged/LICENSE-axe-core"
  (cd "$dist/npm/chromate-mcp" && npm pack --silent --pack-destination "$dist" >/dev/null)
  (cd "$staged" && npm pack --silent --pack-destination "$dist" >/dev/null)
  ls -l "$dist" | sed 1d
}

serve_fixtures() { # DIR: serves DIR on 127.0.0.1; sets fixture_port and server_pid
  exec 3< <(exec python3 -u "$root/tests/clients/serve.py" "$1")
  server_pid=$!
  read -r -t 10 fixture_port <&3 || { echo "dist: the fixture server did not start" >&2; exit 1; }
}

test_dist() {
  [ -x "$bin" ] || { echo "dist: no release binary at $bin; run .ci/dist.sh build first" >&2; exit 1; }
  # The size goal, measured on x86_64 Linux (benches/README.md, "Binary size"): at most 10 MB
  # (10,000,000 bytes) with TLS.
  local bytes
  bytes=$(wc -c <"$bin" | tr -d ' ')
  echo "dist: the release binary is $bytes bytes"
  if [ "$target" = x86_64-unknown-linux-gnu ] && [ "$bytes" -gt 10000000 ]; then
    echo "dist: $bin is $bytes bytes, over the 10 MB goal (10,000,000 bytes; benches/README.md, \"Binary size\")" >&2
    exit 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/chromate-dist.XXXXXX")
  case "$work" in "$root"/*) echo "dist: $work is inside the repository" >&2; exit 1 ;; esac
  server_pid=
  export CHROMATE_RUNTIME_DIR=$work/run CHROMATE_MCP_ARTIFACTS_DIR=$work/artifacts
  unset CHROMATE_AXE_PATH
  trap 'kill $server_pid 2>/dev/null; "$work/alone/chromate" close >/dev/null 2>&1; rm -rf "$work"' EXIT
  mkdir -p "$work/alone" "$work/www" "$work/artifacts"
  cp tests/fixtures/pages/a11y-violations.html tests/clients/fixture.html "$work/www/"
  serve_fixtures "$work/www"

  echo "== the release binary alone in $work/alone: browser_a11y through the command line"
  cp "$bin" "$work/alone/"
  (
    cd "$work/alone"
    ./chromate navigate "http://127.0.0.1:$fixture_port/a11y-violations.html" >/dev/null
    ./chromate a11y --json >"$work/a11y.json"
    ./chromate close >/dev/null
  )
  python3 - "$work/a11y.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
ids = sorted(v["id"] for v in result["violations"])
assert ids == ["color-contrast", "image-alt", "label"], result
print(f"dist: the copied binary's audit found {ids}")
PY

  echo "== the npm tarballs installed into $work/npm, driven by the TypeScript MCP SDK"
  mkdir "$work/npm" && echo '{"private": true}' >"$work/npm/package.json"
  (cd "$work/npm" && npm install --silent --no-audit --no-fund \
    "$dist/chromate-mcp-$version.tgz" "$dist/chromate-mcp-$platform-$version.tgz")
  [ -x "$work/npm/node_modules/.bin/chromate-mcp" ] || { echo "dist: npm installed no chromate-mcp command" >&2; exit 1; }
  [ -d tests/clients/node_modules ] || (cd tests/clients && npm ci --silent --no-audit --no-fund)
  # TMPDIR: the client's artifacts directory goes in $work, removed at the end.
  CHROMATE_COMMAND='["npx", "--no-install", "chromate-mcp", "mcp"]' CHROMATE_CWD="$work/npm" \
    FIXTURE_URL="http://127.0.0.1:$fixture_port/fixture.html" TMPDIR="$work" \
    timeout 120 node tests/clients/client.mjs
}

case "$mode" in
  build) build "$@" ;;
  test) test_dist ;;
  *) echo "usage: .ci/dist.sh build|test [TARGET]" >&2; exit 2 ;;
esac
