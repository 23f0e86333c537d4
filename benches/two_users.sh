#!/usr/bin/env bash
# Two local users and one `chromate mcp --http` (issue 25): the server runs as root with its
# default generated token, writes a screenshot in one session, and a second local account
# tries to reach it: an initialize without the token, the token file, the runtime directory,
# the session directory and the screenshot. Prints a table of attempt -> result, then the modes
# of the artifacts root, the session directory and the browser profile directories.
#
# Needs root. It CREATES the local account `chromate-bench2` (useradd -m) if it is missing and
# leaves it in place afterwards (remove it with `userdel -r chromate-bench2`). Everything goes
# to 127.0.0.1; the server it starts is ended by its PID (SIGTERM, then waited for).
#   cargo build --release -p chromate-mcp --bin chromate && bash benches/two_users.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${CHROMATE_BIN:-$root/target/release/chromate}
other=chromate-bench2
[ "$(id -u)" = 0 ] || { echo "run as root (it creates a second account)" >&2; exit 1; }
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p chromate-mcp --bin chromate" >&2; exit 1; }
if id "$other" >/dev/null 2>&1; then
  echo "account $other exists; using it"
else
  echo "creating the local account $other (useradd -m); it is left in place afterwards"
  useradd -m "$other"
fi

work=$(mktemp -d)
stderr=$work/server.stderr
: >"$stderr"
# The defaults are what is measured: runtime dir /tmp/chromate-0 (no XDG_RUNTIME_DIR for
# root here), artifacts root the OS temporary directory.
env -u XDG_RUNTIME_DIR -u CHROMATE_RUNTIME_DIR -u CHROMATE_MCP_ARTIFACTS_DIR \
  "$bin" mcp --http 127.0.0.1:0 2>"$stderr" </dev/null >/dev/null &
server=$!
cleanup() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server"
    wait "$server" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port= token=
for _ in $(seq 200); do
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$stderr" | head -1)
  token=$(sed -n 's/.*auth token (generated[^)]*): \([^ ]*\) .*/\1/p' "$stderr" | head -1)
  [ -n "$port" ] && [ -n "$token" ] && break
  sleep 0.1
done
[ -n "$port" ] && [ -n "$token" ] || { echo "the server printed no port or token:"; cat "$stderr"; exit 1; }
token_file=$(sed -n 's/.*(kept in \(.*\) for `chromate init --mcp`).*/\1/p' "$stderr" | head -1)
runtime_dir=$(dirname "$token_file")
url=http://127.0.0.1:$port/mcp

# The owner's session: initialize, then a screenshot of a data: page (no network).
post() { # SESSION BODY -> the answer's body (JSON or SSE data lines)
  curl -s -m 60 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' ${1:+-H "MCP-Session-Id: $1"} \
    -d "$2" "$url" | sed -n 's/^data: //p; t; /^{/p'
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"two_users","version":"1"}}}'
session=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -d "$init" "$url" |
  sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii]d: *\([^[:space:]]*\).*/\1/p')
[ -n "$session" ] || { echo "the owner's initialize got no session"; exit 1; }
post "$session" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
post "$session" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"browser_navigate","arguments":{"url":"data:text/html,<h1>owner</h1>"}}}' >/dev/null
shot=$(post "$session" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"browser_screenshot","arguments":{}}}' |
  jq -r 'select(.id == 3) | .result.content[0].text | fromjson | .path' 2>/dev/null)
for _ in $(seq 50); do [ -f "$shot" ] && break; sleep 0.1; done
[ -f "$shot" ] || { echo "the owner's screenshot was not written: $shot"; ls -la "$(dirname "$shot")"; exit 1; }
session_dir=$(dirname "$shot")

as_other() { runuser -u "$other" -- "$@"; }
row() { printf '| %s | %s | %s |\n' "$1" "$2" "$3"; }
echo
echo "server: $bin (pid $server, as root), $url"
echo
echo "| attempt by $other | expected | result |"
echo "|---|---|---|"
status=$(as_other curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -d "$init" "$url")
row "initialize without a token" 401 "$status"
status=$(as_other curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer not-the-token' \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d "$init" "$url")
row "initialize with a wrong token" 401 "$status"
attempt() { # LABEL COMMAND...
  local label=$1 out
  shift
  if out=$(as_other "$@" 2>&1); then
    row "$label" denied "ALLOWED: $(printf '%s' "$out" | head -c 80 | tr '\n|' ' /')"
  else
    row "$label" denied "denied: $(printf '%s' "$out" | head -1 | sed 's/^[^:]*: //' | tr '|' '/')"
  fi
}
attempt "read the token file ($token_file)" cat "$token_file"
attempt "list the runtime dir ($runtime_dir)" ls "$runtime_dir"
attempt "list the session dir ($session_dir)" ls "$session_dir"
attempt "read the screenshot ($shot)" head -c 16 "$shot"
for profile in /tmp/chromate-profile-"$server"-*; do
  [ -d "$profile" ] || continue
  attempt "list the browser profile ($profile)" ls "$profile"
  attempt "read its Local State" head -c 16 "$profile/Local State"
  attempt "list its Default/ (cookies, history)" ls "$profile/Default"
  readable=$(find "$profile" -perm -o+r ! -type l -printf '%P(%m) ' 2>/dev/null)
  row "entries inside the profile with the o+r bit (reachable only when the profile is; the profile itself as \"(mode)\")" "none reachable" "${readable:-none}"
done
paths=$(as_other bash -c 'CHROMATE_RUNTIME_DIR= XDG_RUNTIME_DIR= '"$bin"' init --mcp 2>&1' || true)
if printf '%s' "$paths" | grep -q "$token"; then
  row "chromate init --mcp as $other" "no token of root's server" "LEAKED the token"
else
  row "chromate init --mcp as $other" "no token of root's server" "none: $(printf '%s' "$paths" | head -1 | head -c 80 | tr '|' '/')"
fi

echo
echo "| path | mode | owner |"
echo "|---|---|---|"
artifacts_root=$(dirname "$session_dir")
for path in "$artifacts_root" "$session_dir" "$shot" "$runtime_dir" "$token_file" \
  /tmp/chromate-profile-"$server"-* /tmp/chromate-profile-"$server"-*/Default "/tmp/chromate-profile-$server-"*/"Local State"; do
  [ -e "$path" ] && printf '| %s | %s | %s |\n' "$path" "$(stat -c '%a' "$path")" "$(stat -c '%U' "$path")"
done
echo
echo "account $other left in place (userdel -r $other removes it)"
