#!/usr/bin/env bash
# Refreshes protocol.json from the installed browser's own /json/protocol endpoint and
# rewrites VERSION.md. Never edit protocol.json by hand: deviations live in cdp-gen/src/fixup.rs.
#
#   protocol-json/refresh.sh [path-to-chromium]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
browser=${1:-${CHROMATE_BROWSER:-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}}
profile=$(mktemp -d)
port_file="$profile/DevToolsActivePort"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
  --remote-debugging-port=0 about:blank 2>/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$profile"' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
port=$(head -n1 "$port_file")
curl -sf "http://127.0.0.1:$port/json/protocol" > "$here/protocol.json"
version=$(curl -sf "http://127.0.0.1:$port/json/version" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["Browser"], "(protocol", v["Protocol-Version"] + ")")')
counts=$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))["domains"]
print(len(d), "domains,", sum(len(x.get("commands",[])) for x in d), "commands,",
      sum(len(x.get("events",[])) for x in d), "events,", sum(len(x.get("types",[])) for x in d), "types")' "$here/protocol.json")
cat > "$here/VERSION.md" <<NOTE
# Where protocol.json comes from

\`protocol.json\` is the \`/json/protocol\` document of **$version**, read from the
browser itself by \`protocol-json/refresh.sh\` on $(date -u +%Y-%m-%d). It holds $counts.

It is never edited by hand. Deliberate deviations are applied by the generator and listed in
\`cdp-gen/src/fixup.rs\`.
NOTE
echo "protocol.json: $version; $counts"
