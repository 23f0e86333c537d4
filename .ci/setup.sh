#!/usr/bin/env bash
# Installs what chromate needs when it is missing, idempotently.
#   .ci/setup.sh browser   Chromium and axe-core (the demo)
#   .ci/setup.sh all       Chromium and the test clients (Python mcp SDK, TypeScript MCP SDK, axe-core)
# On Debian/Ubuntu it uses apt-get as root or through sudo; elsewhere it stops at once and
# prints the exact command to run.
set -euo pipefail
what=${1:-all}
here=$(cd "$(dirname "$0")/.." && pwd)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@" || { echo "setup: need root for: $*" >&2; exit 1; }
  else echo "setup: run as root: $*" >&2; exit 1
  fi
}

have_browser() {
  [ -n "${CHROMATE_BROWSER:-}" ] && [ -x "${CHROMATE_BROWSER}" ] && return 0
  for name in chromium chromium-browser google-chrome google-chrome-stable chrome; do
    command -v "$name" >/dev/null 2>&1 && return 0
  done
  return 1
}

if ! have_browser; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    case "$(uname -s)" in
      Darwin) echo "setup: no Chromium found; run: brew install --cask chromium" >&2 ;;
      *) echo "setup: no Chromium found; install it with your package manager (e.g. 'sudo dnf install chromium') or set CHROMATE_BROWSER" >&2 ;;
    esac
    exit 1
  fi
fi

# axe-core for browser_a11y (pinned in engine/axe/package.json; the engine reads
# engine/axe/node_modules/axe-core/axe.min.js, or CHROMATE_AXE_PATH). Both modes need it.
if [ ! -f "$here/engine/axe/node_modules/axe-core/axe.min.js" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then as_root apt-get install -y -qq nodejs npm >/dev/null
    else echo "setup: npm is needed to install axe-core (npm ci --prefix engine/axe)" >&2; exit 1; fi
  fi
  echo "setup: installing axe-core (npm ci --prefix engine/axe)"
  npm ci --prefix "$here/engine/axe" --silent --no-audit --no-fund
fi

[ "$what" = browser ] && exit 0

# Test clients: the Python MCP SDK and the TypeScript MCP SDK (real MCP clients), and axe-core.
if ! python3 -c 'import mcp' >/dev/null 2>&1; then
  echo "setup: installing the Python mcp SDK"
  python3 -m pip install -q --disable-pip-version-check 'mcp>=1.9,<2' >/dev/null
fi
if [ -f "$here/tests/clients/package.json" ] && [ ! -d "$here/tests/clients/node_modules" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then as_root apt-get install -y -qq nodejs npm >/dev/null
    else echo "setup: npm is needed for the TypeScript client tests" >&2; exit 1; fi
  fi
  echo "setup: installing the TypeScript MCP SDK and axe-core (npm ci)"
  (cd "$here/tests/clients" && npm ci --silent --no-audit --no-fund)
fi
