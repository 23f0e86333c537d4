"""Captures and flows, side by side with Playwright's own `page.screenshot` (issue 14's figures).

    target/venv/bin/python benches/peers/captures.py <chromate binary> <base url> [repetitions=7]

<base url> serves tests/fixtures/pages (e.g. `python3 -m http.server -d tests/fixtures/pages`).
Playwright is the `playwright` package from PyPI in target/venv (`target/venv/bin/pip install
playwright`), launched with `executable_path` on the same Debian Chromium as chromate
(/usr/bin/chromium, or $CHROMIUM); no browser is downloaded. Both take 1280x720 PNGs of
bench-2000.html with animations disabled.

- cold: one process from start to a written PNG (chromate: `chromate capture`; Playwright: a
  Python process that imports playwright, launches, navigates, screenshots, closes);
- warm: one more navigation and capture in a browser that already runs (chromate: a capture step
  of a running flow, from run.json; Playwright: `page.goto` + `page.screenshot` in a running
  browser);
- a 10-step flow with 5 captures, whole process (chromate: `chromate flows run`, without and
  with `--video`; Playwright: the same steps in one script; its video needs Playwright's own
  ffmpeg download, which this machine cannot fetch, so it has no video row).

With SHOT_SCRAPER=<path to a shot-scraper script> (PyPI `shot-scraper`, in a venv of its own
with its Playwright), also `shot-scraper shot URL -w 1280 -h 720` cold. shot-scraper has no
executable-path option (only `--browser chromium|chrome|…` and `--browser-arg`), so it is
pointed at the same Debian Chromium through Playwright's browser directory: a temporary
PLAYWRIGHT_BROWSERS_PATH whose headless-shell executable (the path
`playwright install --dry-run chromium-headless-shell` names) is a two-line script exec'ing
$CHROMIUM. It cannot disable animations (Playwright's default, `animations: "allow"`).

Medians of <repetitions> runs, the tools taking turns so load on the shared machine falls on
both alike. Prints a Markdown table.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PAGE = "bench-2000.html"

PLAYWRIGHT_COLD = r"""
import sys
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=sys.argv[1], headless=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(sys.argv[2], wait_until="load")
    page.screenshot(path=sys.argv[3], animations="disabled")
    browser.close()
"""

PLAYWRIGHT_FLOW = r"""
import sys
from playwright.sync_api import sync_playwright
base, out = sys.argv[2], sys.argv[3]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=sys.argv[1], headless=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(base + "/bench-2000.html", wait_until="load")
    page.screenshot(path=out + "/a.png", animations="disabled")
    page.goto(base + "/login.html", wait_until="load")
    page.fill("#email", "ann@example.com")
    page.fill("#password", "hunter2")
    page.screenshot(path=out + "/b.png", animations="disabled")
    page.locator("#login-form").screenshot(path=out + "/c.png", animations="disabled")
    page.goto(base + "/clock.html", wait_until="load")
    page.screenshot(path=out + "/d.png", animations="disabled", mask=[page.locator("#clock")])
    page.screenshot(path=out + "/e.png", animations="disabled", full_page=True)
    browser.close()
"""

FLOW = """
[[flow]]
name = "ten"
base_url = "{base}"
[[flow.step]]
tool = "browser_navigate"
url = "/bench-2000.html"
[[flow.step]]
capture = "a"
[[flow.step]]
tool = "browser_navigate"
url = "/login.html"
[[flow.step]]
tool = "browser_fill"
selector = "#email"
value = "ann@example.com"
[[flow.step]]
tool = "browser_fill"
selector = "#password"
value = "hunter2"
[[flow.step]]
capture = "b"
[[flow.step]]
capture = "c"
selector = "#login-form"
[[flow.step]]
tool = "browser_navigate"
url = "/clock.html"
[[flow.step]]
capture = "d"
mask = ["#clock"]
[[flow.step]]
capture = "e"
full_page = true
"""


def shot_scraper_browsers(shot_scraper, work):
    """A PLAYWRIGHT_BROWSERS_PATH whose headless shell is $CHROMIUM, for shot-scraper."""
    browsers = os.path.join(work, "pw-browsers")
    python = os.path.join(os.path.dirname(shot_scraper), "python")
    listed = subprocess.run(
        [python, "-m", "playwright", "install", "--dry-run", "chromium-headless-shell"],
        capture_output=True, text=True, check=True, env=dict(os.environ, PLAYWRIGHT_BROWSERS_PATH=browsers),
    ).stdout
    location = next(line.split(":", 1)[1].strip() for line in listed.splitlines() if "Install location" in line)
    shell_dir = os.path.join(location, "chrome-headless-shell-linux64")
    os.makedirs(shell_dir)
    shim = os.path.join(shell_dir, "chrome-headless-shell")
    with open(shim, "w") as file:
        file.write(f'#!/bin/sh\nexec "{CHROMIUM}" "$@"\n')
    os.chmod(shim, 0o755)
    return browsers


def timed(command, env=None):
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def main():
    load_before = os.getloadavg()
    chromate, base = sys.argv[1], sys.argv[2].rstrip("/")
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    work = tempfile.mkdtemp(prefix="captures-bench-")
    env = dict(os.environ, CHROMATE_BROWSER=CHROMIUM)
    url = f"{base}/{PAGE}"
    python = sys.executable
    flow_file = os.path.join(work, "flows.toml")
    with open(flow_file, "w") as file:
        file.write(FLOW.format(base=base))
    warm_file = os.path.join(work, "warm.toml")
    with open(warm_file, "w") as file:
        file.write(f'[[flow]]\nname = "warm"\nbase_url = "{base}"\n')
        for index in range(reps + 1):
            file.write(f'[[flow.step]]\ncapture = "w{index}"\nurl = "/{PAGE}"\n')
    rows = {key: [] for key in ["chromate cold", "playwright cold", "chromate flow", "chromate flow video", "playwright flow", "shot-scraper cold"]}
    shot_scraper = os.environ.get("SHOT_SCRAPER")
    shot_env = None
    if shot_scraper:
        shot_env = dict(os.environ, PLAYWRIGHT_BROWSERS_PATH=shot_scraper_browsers(shot_scraper, work))
    for rep in range(reps):
        out = os.path.join(work, f"out{rep}")
        os.makedirs(out)
        rows["chromate cold"].append(timed([chromate, "capture", url, "--name", "cold", "--output-dir", out], env))
        rows["playwright cold"].append(timed([python, "-c", PLAYWRIGHT_COLD, CHROMIUM, url, os.path.join(out, "pw.png")]))
        if shot_scraper:
            shot = [shot_scraper, "shot", url, "-o", os.path.join(out, "ss.png"), "-w", "1280", "-h", "720"]
            rows["shot-scraper cold"].append(timed(shot, shot_env))
        rows["chromate flow"].append(timed([chromate, "flows", "run", "--config", flow_file, "--output-dir", out, "--quiet"], env))
        rows["chromate flow video"].append(timed([chromate, "flows", "run", "--config", flow_file, "--output-dir", out + "-v", "--quiet", "--video"], env))
        flow_out = os.path.join(out, "pw-flow")
        os.makedirs(flow_out)
        rows["playwright flow"].append(timed([python, "-c", PLAYWRIGHT_FLOW, CHROMIUM, base, flow_out]))
    # Warm: capture steps after the first, in one running browser.
    warm_out = os.path.join(work, "warm")
    subprocess.run([chromate, "flows", "run", "--config", warm_file, "--output-dir", warm_out, "--quiet"], check=True, env=env)
    with open(os.path.join(warm_out, "warm", "run.json")) as file:
        steps = json.load(file)["steps"]
    rows["chromate warm"] = [step["duration_ms"] for step in steps[1:]]
    # What freezing costs: captures without navigating in one running browser, bench-2000.html
    # loaded, animations disabled and allowed, in turns.
    freeze = {"disabled": [], "allow": []}
    for turn in ["disabled", "allow", "disabled", "allow"]:
        freeze_file = os.path.join(work, f"freeze-{turn}.toml")
        with open(freeze_file, "w") as file:
            file.write(f'[[flow]]\nname = "freeze"\nbase_url = "{base}"\n')
            file.write(f'[[flow.step]]\ntool = "browser_navigate"\nurl = "/{PAGE}"\n')
            for index in range(reps + 1):
                file.write(f'[[flow.step]]\ncapture = "f{index}"\nanimations = "{turn}"\n')
        freeze_out = tempfile.mkdtemp(dir=work)
        subprocess.run([chromate, "flows", "run", "--config", freeze_file, "--output-dir", freeze_out, "--quiet"], check=True, env=env, stdout=subprocess.DEVNULL)
        with open(os.path.join(freeze_out, "freeze", "run.json")) as file:
            freeze[turn].extend(step["duration_ms"] for step in json.load(file)["steps"][2:])
    from playwright.sync_api import sync_playwright
    warm = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url, wait_until="load")
        page.screenshot(path=os.path.join(work, "pw-warm.png"), animations="disabled")
        for index in range(reps):
            started = time.perf_counter()
            page.goto(url, wait_until="load")
            page.screenshot(path=os.path.join(work, f"pw-warm{index}.png"), animations="disabled")
            warm.append((time.perf_counter() - started) * 1000)
        browser.close()
    rows["playwright warm"] = warm
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    import importlib.metadata
    load_after = os.getloadavg()
    print(f"{version}; playwright {importlib.metadata.version('playwright')}; medians of {reps}")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}\n")
    print("| | chromate ms | Playwright ms | chromate / Playwright |")
    print("|---|---:|---:|---:|")
    for label, ours, theirs in [
        ("one capture of bench-2000.html, cold (process start to PNG)", "chromate cold", "playwright cold"),
        ("one capture, warm (navigate + capture, browser running)", "chromate warm", "playwright warm"),
        ("10-step flow, 5 captures (whole process)", "chromate flow", "playwright flow"),
    ]:
        a = statistics.median(rows[ours])
        b = statistics.median(rows[theirs])
        print(f"| {label} | {a:.0f} | {b:.0f} | {a / b:.2f} |")
    print(f"| 10-step flow, 5 captures, with video (WebM + MP4) | {statistics.median(rows['chromate flow video']):.0f} | n/a | |")
    print(
        f"| chromate: a capture without navigating, frozen / animations allowed | "
        f"{statistics.median(freeze['disabled']):.0f} | {statistics.median(freeze['allow']):.0f} (allowed) | |"
    )
    if shot_scraper:
        a = statistics.median(rows["chromate cold"])
        b = statistics.median(rows["shot-scraper cold"])
        print(f"| one capture, cold, against shot-scraper (animations allowed on its side) | {a:.0f} | {b:.0f} (shot-scraper) | {a / b:.2f} |")


main()
