#!/usr/bin/env bash
# The main job: installs Chromium if it is missing, then runs the demo (a page chromate serves
# itself, driven in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh browser
exec cargo run -q --release -p chromate --example demo
