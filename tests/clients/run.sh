#!/usr/bin/env bash
# Drives `chromate mcp` with real MCP clients against tests/clients/fixture.html served on
# 127.0.0.1 by serve.py, in both MCP eras (docs/mcp-eras.md):
#   client.mjs         TypeScript SDK 1.x (@modelcontextprotocol/sdk), legacy era (initialize)
#   client-modern.mjs  TypeScript SDK 2.x (@modelcontextprotocol/client), modern era (2026-07-28)
#   client-http.mjs    TypeScript SDK 1.x over Streamable HTTP (`chromate mcp --http`), 20 sessions;
#                      401 (no or a wrong --auth-token) and 403 (a foreign Origin) as the SDK reports them
#   inspector-http.mjs MCP Inspector's CLI with --transport http against `chromate mcp --http`
#   inspector.mjs      MCP Inspector's CLI, protocolEra modern and auto
#   client.py          Python SDK 2.x (mcp), both eras; run with target/venv's python
# Versions are pinned in package.json / package-lock.json and .ci/setup.sh. Prints
# `N passed, N failed` (one per check; a client that crashes counts as a failure).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${CHROMATE_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/chromate}
if [ ! -x "$bin" ]; then
  (cd "$root" && cargo build -q -p chromate-mcp) || { echo "0 passed, 1 failed (cannot build chromate)"; exit 1; }
fi
[ -d "$here/node_modules" ] || (cd "$here" && npm ci --silent --no-audit --no-fund)
venv_python=$root/target/venv/bin/python
[ -x "$venv_python" ] || bash "$root/.ci/setup.sh" all

www=$(mktemp -d)
out=$(mktemp)
# The clients' and servers' own temp directories (artifacts, runtime directories) go here and
# are removed with it at the end.
scratch=$(mktemp -d)
cp "$here/fixture.html" "$www/"
exec 3< <(exec python3 -u "$here/serve.py" "$www")
server_pid=$!
cleanup() { kill "$server_pid" 2>/dev/null; rm -rf "$www" "$out" "$scratch"; }
trap cleanup EXIT
if ! read -r -t 10 port <&3; then
  echo "0 passed, 1 failed (the fixture server did not start)"; exit 1
fi
export CHROMATE_BIN="$bin" FIXTURE_URL="http://127.0.0.1:$port/fixture.html" TMPDIR="$scratch"

for client in "node $here/client.mjs" "node $here/client-modern.mjs" "node $here/client-http.mjs" "node $here/inspector.mjs" "node $here/inspector-http.mjs" "$venv_python $here/client.py"; do
  before=$(grep -c '' "$out")
  fails_before=$(grep -c '^FAIL' "$out")
  timeout 120 $client >>"$out" 2>&1
  status=$?
  if [ "$status" -ne 0 ] && [ "$(grep -c '^FAIL' "$out")" -eq "$fails_before" ]; then
    echo "FAIL $client exited $status without a failed check" >>"$out"
  fi
  tail -n +"$((before + 1))" "$out"
done
passed=$(grep -c '^PASS' "$out")
failed=$(grep -c '^FAIL' "$out")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
