// chromate's command line against agent-browser's, side by side: the wall time of the whole client
// process for each step (exec to exit), the bytes each prints on stdout, and the daemons' memory.
//
//   node benches/peers/cli_side_by_side.mjs [chromate binary=target/release/chromate] [repetitions=5] [base url]
//
// agent-browser is the native binary of the npm package installed in benches/peers/node_modules
// (see benches/README.md, "The command line against agent-browser"), or $AGENT_BROWSER_BIN. Both
// tools drive their own headless Debian Chromium ($CHROMIUM, else `command -v chromium`):
// chromate through CHROMATE_BROWSER, agent-browser through AGENT_BROWSER_EXECUTABLE_PATH (no
// `--args`: it adds --no-sandbox itself when it runs as root). Without a base URL the script serves
// tests/fixtures/pages itself on 127.0.0.1 (an ephemeral port, in this process); nothing it runs
// talks to anything but loopback (agent-browser's Chrome version check is turned off with
// AGENT_BROWSER_NO_VERSION_CHECK=1, since it fetches a web page).
//
// Each tool gets its own runtime directory under a temp dir (CHROMATE_RUNTIME_DIR,
// AGENT_BROWSER_SOCKET_DIR; artifacts and screenshots there too). Per repetition, every step runs
// for both tools back to back, the order alternating by repetition (chromate first, then
// agent-browser first), so that the load of the moment falls on both alike:
//   cold     close a fresh session (nothing runs), then time its first command, `navigate`/`open`
//            of login.html: client + daemon start + browser launch + page load; then close it
//            and check by PID that its daemon, browser and crash handlers are gone;
//   warm     on one long-lived session per tool (started, set to the same 1280×800 viewport and
//            warmed up by one untimed round): open login.html; snapshot of it; fill #email;
//            screenshot; click #to-nav2 on nav.html (a link: it navigates; nav.html is opened
//            untimed first); open bench-2000.html; snapshot of it; chromate `status`,
//            agent-browser `get url` (its nearest cheap query); and /bin/true, the harness's floor.
// chromate's snapshot is `chromate snapshot` (its default view); agent-browser's is `snapshot -i`
// (interactive elements only). Selectors are CSS for both. Two checks follow, untimed as figures:
// when each tool's click returns (a link to a page whose image the server holds back SLOW_MS, then
// the page's readyState read by the next command), and what each tool's fill does (the page counts
// the keydown and input events it receives).
//
// Times are taken by a small Python helper (posix_spawn, then waitpid: exec to exit of the client
// process, stdout and stderr to files), since Node's own spawn costs about 3 ms a process here.
// The report (markdown) gives medians and min–max; with $CLI_SBS_JSON it also writes every sample.
// At the end every session is closed and every process the script started (the daemons, their
// browsers and the browsers' children, the crash handlers those launched) is checked gone by PID.
// Processes are the script's by ancestry (under a daemon it started) or, for the crash handlers,
// which leave the tree, by an environment naming the script's temp dir, so another session's
// Chromium on a shared machine is never counted or killed; a survivor of ours is killed by its PID
// and reported.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const repo = path.resolve(new URL("../..", import.meta.url).pathname);
const [binArg, repsArg, baseArg] = process.argv.slice(2);
const chromate = path.resolve(binArg ?? path.join(repo, "target/release/chromate"));
const N = Number(repsArg ?? 5);
const agentBrowser = process.env.AGENT_BROWSER_BIN
  ?? path.join(repo, "benches/peers/node_modules/agent-browser/bin/agent-browser-linux-x64");
const chromium = process.env.CHROMIUM ?? execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
if (!fs.existsSync(chromate) || !fs.existsSync(agentBrowser) || !(N >= 1)) {
  console.error("usage: node benches/peers/cli_side_by_side.mjs [chromate binary] [repetitions] [base url]");
  console.error(`  chromate: ${chromate}${fs.existsSync(chromate) ? "" : " (missing)"}`);
  console.error(`  agent-browser: ${agentBrowser}${fs.existsSync(agentBrowser) ? "" : " (missing: see benches/README.md)"}`);
  process.exit(2);
}
try { fs.accessSync(agentBrowser, fs.constants.X_OK); } catch {
  console.error(`${agentBrowser} is not executable (npm skipped agent-browser's postinstall?): chmod +x it`);
  process.exit(2);
}
const SLOW_MS = 800;
const FILL_VALUE = "bob@example.org"; // 15 characters, replacing login.html's "ann@example.com"
const work = fs.mkdtempSync(path.join(os.tmpdir(), "cli-sbs-"));
const homeAgentDir = path.join(os.homedir(), ".agent-browser");
const homeAgentDirExisted = fs.existsSync(homeAgentDir);

// --- the fixture server ----------------------------------------------------------------------
// tests/fixtures/pages as static files, plus the click check's two pages under /__bench/.
const pagesDir = path.join(repo, "tests/fixtures/pages");
const BENCH_PAGES = {
  "/__bench/slow-start.html": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Slow start</title></head>
<body><main><h1>Start</h1><p><a id="go" href="/__bench/slow-end.html">Go to the slow page</a></p></main></body></html>`,
  "/__bench/slow-end.html": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Slow end</title></head>
<body><main><h1>Slow end</h1><img alt="held back" src="/__bench/slow.png" width="1" height="1"></main></body></html>`,
  "/__bench/fill-check.html": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fill check</title></head>
<body><main><h1>Fill check</h1><label for="f">Email</label> <input id="f" type="email" value="ann@example.com"></main>
<script>window.counts = { keydown: 0, input: 0 };
for (const k of ["keydown", "input"]) document.getElementById("f").addEventListener(k, () => window.counts[k]++);</script></body></html>`,
};
const PNG_1PX = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
let server;
async function startServer() {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (BENCH_PAGES[url.pathname]) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      return res.end(BENCH_PAGES[url.pathname]);
    }
    if (url.pathname === "/__bench/slow.png") {
      const t = setTimeout(() => { res.writeHead(200, { "content-type": "image/png", "cache-control": "no-store" }); res.end(PNG_1PX); }, SLOW_MS);
      res.on("close", () => clearTimeout(t));
      return;
    }
    const file = path.join(pagesDir, path.normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, ""));
    if (!file.startsWith(pagesDir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("not found");
    }
    const type = file.endsWith(".html") ? "text/html; charset=utf-8" : file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : "application/octet-stream";
    res.writeHead(200, { "content-type": type });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

// --- the two tools -----------------------------------------------------------------------------
const chromateEnv = {
  ...process.env,
  CHROMATE_RUNTIME_DIR: path.join(work, "chromate-runtime"),
  CHROMATE_MCP_ARTIFACTS_DIR: path.join(work, "chromate-artifacts"),
  CHROMATE_BROWSER: chromium,
};
const abEnv = {
  ...process.env,
  AGENT_BROWSER_SOCKET_DIR: path.join(work, "agent-browser-sockets"),
  AGENT_BROWSER_SCREENSHOT_DIR: path.join(work, "agent-browser-screenshots"),
  AGENT_BROWSER_EXECUTABLE_PATH: chromium,
  AGENT_BROWSER_NO_VERSION_CHECK: "1",
  AGENT_BROWSER_IDLE_TIMEOUT_MS: "900000", // a safety net: the script closes every session itself
};
fs.mkdirSync(chromateEnv.CHROMATE_RUNTIME_DIR, { mode: 0o700 });
fs.mkdirSync(chromateEnv.CHROMATE_MCP_ARTIFACTS_DIR, { mode: 0o700 });
fs.mkdirSync(abEnv.AGENT_BROWSER_SOCKET_DIR, { mode: 0o700 });
fs.mkdirSync(abEnv.AGENT_BROWSER_SCREENSHOT_DIR, { mode: 0o700 });

const tools = [
  {
    key: "chromate",
    bin: chromate,
    env: chromateEnv,
    argv: (session, args) => [...args, "--session", session],
    open: (url) => ["navigate", url],
    snapshot: () => ["snapshot"],
    fill: (sel, v) => ["fill", sel, v],
    click: (sel) => ["click", sel],
    screenshot: () => ["screenshot"],
    query: () => ["status"],
    readyState: () => ["eval", "document.readyState + ' ' + location.pathname"],
    evaluate: (js) => ["eval", js],
    close: () => ["close"],
    // The daemon's and the browser's PIDs, from `status --json`.
    async pids(session) {
      const r = await run(this, session, ["status", "--json"]);
      const s = JSON.parse(r.stdout);
      return { daemon: s.serverPid, browser: s.browserPid };
    },
  },
  {
    key: "agent-browser",
    bin: agentBrowser,
    env: abEnv,
    argv: (session, args) => ["--session", session, ...args],
    open: (url) => ["open", url],
    snapshot: () => ["snapshot", "-i"],
    fill: (sel, v) => ["fill", sel, v],
    click: (sel) => ["click", sel],
    screenshot: () => ["screenshot"],
    query: () => ["get", "url"],
    readyState: () => ["eval", "document.readyState + ' ' + location.pathname"],
    evaluate: (js) => ["eval", js],
    close: () => ["close"],
    // The daemon writes its PID next to its socket; the browser is its child.
    async pids(session) {
      const daemon = Number(fs.readFileSync(path.join(abEnv.AGENT_BROWSER_SOCKET_DIR, `${session}.pid`), "utf8").trim());
      const browser = descendants(daemon).find((p) => /chrom/.test(procStatus(p)?.name ?? ""));
      return { daemon, browser };
    },
  },
];

// --- running one client process ------------------------------------------------------------------
// Node's own spawn costs about 3 ms per process on this machine (fork of a large process, pipes,
// the event loop), more than the smallest steps measured here. So a small Python helper, started
// once, does the timing: posix_spawn (vfork-like in glibc) with stdout and stderr going to files,
// then waitpid; the time is from just before posix_spawn to waitpid's return, i.e. exec to exit of
// the whole client process. The helper's own floor is reported (`/bin/true`).
const SPAWNER = String.raw`
import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
          (os.POSIX_SPAWN_OPEN, 1, req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
          (os.POSIX_SPAWN_OPEN, 2, req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    try:
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(req["argv"][0], req["argv"], req["env"], file_actions=fa)
        _, status = os.waitpid(pid, 0)
        t1 = time.perf_counter_ns()
        print(json.dumps({"ms": (t1 - t0) / 1e6, "code": os.waitstatus_to_exitcode(status)}), flush=True)
    except OSError as err:
        print(json.dumps({"error": str(err)}), flush=True)
`;
let spawner;
function startSpawner() {
  const child = spawn("python3", ["-c", SPAWNER], { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = [];
  let buf = "";
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) { const line = buf.slice(0, i); buf = buf.slice(i + 1); waiting.shift()?.(JSON.parse(line)); }
  });
  child.on("exit", (code) => { for (const w of waiting.splice(0)) w({ error: `the timing helper exited (${code})` }); });
  spawner = { child, ask: (req) => new Promise((resolve) => { waiting.push(resolve); child.stdin.write(JSON.stringify(req) + "\n"); }) };
}
const now = () => Number(process.hrtime.bigint()) / 1e6;
let execCount = 0;
async function exec(bin, argv, env) {
  const out = path.join(work, "out"), err = path.join(work, "err");
  const r = await spawner.ask({ argv: [bin, ...argv], env, out, err });
  if (r.error) throw new Error(`${bin} ${argv.join(" ")}: ${r.error}`);
  execCount++;
  const stdout = fs.readFileSync(out);
  return { ms: r.ms, code: r.code, stdout: stdout.toString("utf8"), stderr: fs.readFileSync(err, "utf8"), bytes: stdout.length };
}
async function run(tool, session, args, { allowFail = false } = {}) {
  const r = await exec(tool.bin, tool.argv(session, args), tool.env);
  if (r.code !== 0 && !allowFail) throw new Error(`${tool.key} ${args.join(" ")} (session ${session}) exited ${r.code}: ${(r.stderr || r.stdout).slice(0, 800)}`);
  return r;
}

// --- /proc ---------------------------------------------------------------------------------------
function procStatus(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? 0);
    return { rss: kb("VmRSS"), hwm: kb("VmHWM"), name: /^Name:\s+(.*)$/m.exec(s)?.[1], state: /^State:\s+(\S)/m.exec(s)?.[1] };
  } catch { return null; }
}
function descendants(root) {
  const children = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch { /* exited meanwhile */ }
  }
  const out = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) { const p = stack.pop(); out.push(p); stack.push(...(children.get(p) ?? [])); }
  return out;
}
const startTime = (pid) => { try { const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8"); return st.slice(st.lastIndexOf(")") + 2).split(" ")[19]; } catch { return null; } };
// Whether a crash handler is one of ours: it inherits the environment of the browser that started
// it, which names the script's own temp dir. Other sessions on a shared machine run Chromium too;
// their crash handlers are never counted or killed. (The processes under a daemon or a lone
// Chromium are ours by ancestry; Chromium's zygotes and their children start with an empty
// environment, so ancestry is the test there, and every PID is checked against its start time.)
const ours = (pid) => { try { return fs.readFileSync(`/proc/${pid}/environ`, "utf8").includes(work); } catch { return false; } };
// Chromium's crash handlers double-fork away from the browser (parent init), so the process tree
// misses them: those of ours that appear while a session launches its browser are that session's.
function crashpadHandlers() {
  const out = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!fs.readlinkSync(`/proc/${d}/exe`).endsWith("/chrome_crashpad_handler") || !ours(d)) continue;
      out.set(Number(d), startTime(d));
    } catch { /* exited, or not ours to read */ }
  }
  return out;
}
// A process counts as gone once it has exited (a zombie waiting for init to reap it is gone).
const alive = (pid, start) => { const st = procStatus(pid); return !!st && st.state !== "Z" && (start == null || startTime(pid) === start); };

// --- sessions: started, tracked, closed, checked gone ---------------------------------------------
const sessions = []; // { tool, name, procs: [[pid, start]], closed }
const cleanupNotes = [];
async function track(tool, name, crashBefore) {
  const s = { tool, name, procs: [], closed: false };
  sessions.push(s);
  const { daemon, browser } = await tool.pids(name);
  s.daemon = daemon;
  s.browser = browser;
  const tree = [daemon, ...descendants(daemon)];
  const crash = [...crashpadHandlers()].filter(([pid]) => !crashBefore.has(pid)).map(([pid]) => pid);
  s.procs = [...new Set([...tree, ...crash])].map((p) => [p, startTime(p)]);
  if (!browser) cleanupNotes.push(`${tool.key} ${name}: no browser process found under daemon ${daemon}`);
  return s;
}
async function closeSession(s) {
  if (s.closed) return;
  s.closed = true;
  // Processes the browser started since tracking (renderers) are its descendants now.
  const late = s.daemon && alive(s.daemon) ? descendants(s.daemon).filter((p) => !s.procs.some(([q]) => q === p)).map((p) => [p, startTime(p)]) : [];
  s.procs.push(...late);
  try { s.closeRun = s.close ? await s.close() : await run(s.tool, s.name, s.tool.close()); } catch (e) { cleanupNotes.push(`${s.tool.key} ${s.name}: close failed: ${e.message}`); }
  const t0 = now(), deadline = t0 + 8000;
  for (const [pid, start] of s.procs) {
    while (alive(pid, start) && now() < deadline) await sleep(20);
  }
  s.goneMs = now() - t0;
  for (const [pid, start] of s.procs) {
    if (!alive(pid, start)) continue;
    cleanupNotes.push(`${s.tool.key} ${s.name}: pid ${pid} (${procStatus(pid)?.name}) still running 8 s after close; killed`);
    try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The browser alone, for scale: Chromium spawned the way both tools spawn it (headless, a fresh
// profile), timed from spawn to its "DevTools listening" line, then ended by its PID (SIGTERM)
// and checked gone with its children and crash handlers like a session.
async function chromiumAlone(i) {
  const profile = fs.mkdtempSync(path.join(work, "chromium-"));
  const before = crashpadHandlers();
  const t0 = now();
  const child = spawn(chromium, ["--headless=new", "--no-sandbox", "--remote-debugging-port=0", `--user-data-dir=${profile}`,
    "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--window-size=1280,800", "about:blank"], { env: { ...process.env, CLI_SBS_WORK: work }, stdio: ["ignore", "ignore", "pipe"] });
  const s = { tool: { key: "chromium" }, name: `alone${i}`, procs: [], closed: false };
  sessions.push(s);
  let err = "";
  const ms = await new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => { err += d; if (/DevTools listening on ws:/.test(err)) resolve(now() - t0); });
    child.on("exit", (code) => reject(new Error(`chromium exited (${code}) before listening: ${err.slice(-400)}`)));
  });
  child.stderr.resume();
  s.daemon = child.pid;
  s.procs = [child.pid, ...descendants(child.pid), ...[...crashpadHandlers()].filter(([p]) => !before.has(p)).map(([p]) => p)].map((p) => [p, startTime(p)]);
  s.close = async () => { try { process.kill(child.pid, "SIGTERM"); } catch { /* gone */ } };
  return { ms, bytes: 0 };
}

// --- samples ---------------------------------------------------------------------------------------
const samples = {}; // figure id -> tool key -> [{ ms, bytes, extra }]
function record(id, tool, r, extra = {}) {
  ((samples[id] ??= {})[tool.key] ??= []).push({ ms: r.ms, bytes: r.bytes, ...extra });
  return r;
}
const ordered = (i) => (i % 2 ? [tools[1], tools[0]] : tools);

// --- the run ---------------------------------------------------------------------------------------------
const loadStart = os.loadavg();
const started = new Date();
let base = baseArg;
const warm = {};
const clickCheck = [];
const fillCheck = [];
process.on("SIGINT", () => { console.error("interrupted: cleaning up"); cleanup().finally(() => process.exit(130)); });
try {
  startSpawner();
  if (!base) base = await startServer();
  const versions = {
    chromate: execFileSync(chromate, ["--version"], { encoding: "utf8" }).trim(),
    agentBrowser: execFileSync(agentBrowser, ["--version"], { encoding: "utf8", env: abEnv }).trim(),
    chromium: (() => { try { return execFileSync(chromium, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(); } catch { return "?"; } })(),
    commit: (() => { try { return execFileSync("git", ["-C", repo, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(); } catch { return "?"; } })(),
  };
  const u = (p) => `${base}/${p}`;

  // The long-lived sessions: started untimed, then one untimed round of every warm step.
  for (const t of tools) {
    const before = crashpadHandlers();
    await run(t, "warm", t.open(u("login.html")));
    warm[t.key] = await track(t, "warm", before);
  }
  // Both browsers at the same viewport (chromate's default, 1280×800; agent-browser's is 1280×720).
  await run(tools[1], "warm", ["set", "viewport", "1280", "800"]);

  const warmRound = async (i, timed) => {
    const rec = (id, t, r, extra) => (timed ? record(id, t, r, extra) : r);
    for (const t of ordered(i)) rec("open", t, await run(t, "warm", t.open(u("login.html"))));
    for (const t of ordered(i)) rec("snap-login", t, await run(t, "warm", t.snapshot()));
    for (const t of ordered(i)) rec("fill", t, await run(t, "warm", t.fill("#email", FILL_VALUE)));
    for (const t of ordered(i)) rec("screenshot", t, await run(t, "warm", t.screenshot()));
    for (const t of ordered(i)) {
      await run(t, "warm", t.open(u("nav.html")));
      rec("click", t, await run(t, "warm", t.click("#to-nav2")));
    }
    for (const t of ordered(i)) rec("open-big", t, await run(t, "warm", t.open(u("bench-2000.html"))));
    for (const t of ordered(i)) rec("snap-big", t, await run(t, "warm", t.snapshot()));
    for (const t of ordered(i)) rec("query", t, await run(t, "warm", t.query()));
    for (const t of ordered(i)) rec("floor", t, await exec("/bin/true", [], t.env));
  };
  await warmRound(0, false);

  for (let i = 0; i < N; i++) {
    // Cold: a fresh session, closed first (nothing runs there), its first command timed.
    for (const t of ordered(i)) {
      const name = `cold${i}`;
      await run(t, name, t.close());
      const before = crashpadHandlers();
      record("cold", t, await run(t, name, t.open(u("login.html"))));
      const s = await track(t, name, before);
      await closeSession(s);
      record("close", t, s.closeRun ?? { ms: NaN, bytes: 0 }, { goneMs: s.goneMs });
      await sleep(300); // let the closed browser's teardown finish before the next timed step
    }
    {
      const r = await chromiumAlone(i);
      record("chromium", tools[0], r);
      await closeSession(sessions[sessions.length - 1]);
      await sleep(300);
    }
    await warmRound(i, true);
  }

  // When does a click that navigates return? The next page's image is held back SLOW_MS.
  for (let i = 0; i < 3; i++) {
    for (const t of ordered(i)) {
      await run(t, "warm", t.open(u("__bench/slow-start.html")));
      const c = await run(t, "warm", t.click("#go"));
      const r = await run(t, "warm", t.readyState(), { allowFail: true });
      clickCheck.push({ tool: t.key, clickMs: c.ms, after: r.code === 0 ? r.stdout.trim().split("\n")[0] : `exit ${r.code}: ${(r.stderr || r.stdout).trim().split("\n")[0]}` });
      await sleep(SLOW_MS + 200);
    }
  }

  // What each tool's fill does to the page: key events and input events counted by the page.
  for (const t of tools) {
    await run(t, "warm", t.open(u("__bench/fill-check.html")));
    const f = await run(t, "warm", t.fill("#f", FILL_VALUE));
    const r = await run(t, "warm", t.evaluate("JSON.stringify({ ...window.counts, value: document.getElementById('f').value })"));
    fillCheck.push({ tool: t.key, fillMs: f.ms, after: r.stdout.trim().split("\n")[0] });
  }

  // Memory of the long-lived daemons after the run (the browsers aside).
  for (const t of tools) {
    const s = warm[t.key];
    s.mem = procStatus(s.daemon);
    s.browserRss = [s.browser, ...descendants(s.browser)].reduce((a, p) => a + (procStatus(p)?.rss ?? 0), 0);
  }

  report(versions);
} finally {
  await cleanup();
}

async function cleanup() {
  for (const s of sessions) await closeSession(s);
  // Sessions started but not tracked (a failure between the first command and `track`).
  for (const dir of [abEnv.AGENT_BROWSER_SOCKET_DIR]) {
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const m = /^(.*)\.pid$/.exec(f);
      if (!m || sessions.some((s) => s.tool.key === "agent-browser" && s.name === m[1])) continue;
      const pid = Number(fs.readFileSync(path.join(dir, f), "utf8"));
      if (alive(pid)) { cleanupNotes.push(`agent-browser ${m[1]}: untracked daemon ${pid}; closed`); await run(tools[1], m[1], ["close"], { allowFail: true }); }
    }
  }
  for (const f of fs.existsSync(chromateEnv.CHROMATE_RUNTIME_DIR) ? fs.readdirSync(chromateEnv.CHROMATE_RUNTIME_DIR) : []) {
    const m = /^(.*)\.sock$/.exec(f);
    if (!m || sessions.some((s) => s.tool.key === "chromate" && s.name === m[1])) continue;
    cleanupNotes.push(`chromate ${m[1]}: untracked session; closed`);
    await run(tools[0], m[1], ["close"], { allowFail: true });
  }
  if (server) { server.closeAllConnections(); await new Promise((r) => server.close(r)); }
  if (spawner) { spawner.child.stdin.end(); await new Promise((r) => (spawner.child.exitCode != null ? r() : spawner.child.on("exit", r))); }
  const total = sessions.reduce((a, s) => a + s.procs.length, 0);
  console.log(`\ncleanup: ${sessions.filter((s) => s.tool.key !== "chromium").length} sessions closed, ${sessions.filter((s) => s.tool.key === "chromium").length} lone Chromiums ended; ${cleanupNotes.length ? cleanupNotes.join("; ") : `all ${total} processes they started (daemons, browsers and their children, the browsers' crash handlers) checked gone by PID after close`}`);
  if (!homeAgentDirExisted && fs.existsSync(homeAgentDir)) {
    console.log(`note: agent-browser created ${homeAgentDir}; removed`);
    fs.rmSync(homeAgentDir, { recursive: true, force: true });
  }
  if (process.env.CLI_SBS_KEEP !== "1") fs.rmSync(work, { recursive: true, force: true });
}

// --- report -------------------------------------------------------------------------------------------
function report(versions) {
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
  const ms = (id, key) => (samples[id]?.[key] ?? []).map((r) => r.ms);
  const by = (id, key) => (samples[id]?.[key] ?? []).map((r) => r.bytes);
  const fmt = (xs) => {
    if (!xs.length) return "—";
    const m = median(xs), d = m >= 100 ? 0 : 1;
    return `${m.toFixed(d)} ms (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
  };
  const fb = (xs) => (xs.length ? `${median(xs).toLocaleString("en-US")} B${Math.min(...xs) !== Math.max(...xs) ? ` (${Math.min(...xs).toLocaleString("en-US")}–${Math.max(...xs).toLocaleString("en-US")})` : ""}` : "—");
  const ratio = (a, b) => (a != null && b ? (a / b).toFixed(2) : "—");
  const verdict = (r, limit) => (r === "—" ? "" : Number(r) <= limit ? "met" : `**missed** (${(Number(r) / limit).toFixed(2)}× the limit)`);
  const C = "chromate", A = "agent-browser";
  const rows = [];
  const timeRow = (label, id, limit = 0.5, aLabel) => {
    const c = ms(id, C), a = ms(id, A);
    const r = ratio(c.length ? median(c) : null, a.length ? median(a) : null);
    const target = Number.isFinite(limit) ? `≤ ${limit}` : "";
    rows.push(`| ${label}, ms | ${fmt(c)} | ${fmt(a)}${aLabel ?? ""} | ${r} | ${target} | ${target ? verdict(r, limit) : ""} |`);
  };
  const bytesRow = (label, cId, aId, limit) => {
    const c = by(cId, C), a = by(aId, A);
    const r = ratio(c.length ? median(c) : null, a.length ? median(a) : null);
    rows.push(`| ${label} | ${fb(c)} | ${fb(a)} | ${r} | ${limit ? `≤ ${limit}` : ""} | ${limit ? verdict(r, limit) : ""} |`);
  };
  timeRow("first command, cold (daemon + browser + open login.html)", "cold");
  rows.push(`| *for scale:* Chromium alone, spawn → "DevTools listening" (no page, no client), ms | ${fmt(ms("chromium", C))} | | | | |`);
  timeRow("open / navigate login.html, warm", "open");
  timeRow("snapshot of bench-2000.html (`snapshot` / `snapshot -i`)", "snap-big");
  bytesRow("snapshot of bench-2000.html, stdout bytes", "snap-big", "snap-big");
  bytesRow("the page as printed: chromate `navigate bench-2000.html` vs agent-browser `snapshot -i`", "open-big", "snap-big", 0.25);
  timeRow("snapshot of login.html", "snap-login");
  bytesRow("snapshot of login.html, stdout bytes", "snap-login", "snap-login");
  bytesRow("the page as printed: chromate `navigate login.html` vs agent-browser `snapshot -i`", "open", "snap-login", 0.25);
  timeRow("fill #email (15 characters)", "fill");
  timeRow("click #to-nav2 (navigates; chromate returns after the new page's load, agent-browser before: see the click check)", "click");
  timeRow("screenshot (viewport 1280×800, PNG)", "screenshot");
  timeRow("open / navigate bench-2000.html, warm", "open-big");
  bytesRow("open / navigate bench-2000.html, stdout bytes", "open-big", "open-big");
  {
    const c = ms("query", C), a = ms("query", A);
    const m = c.length ? median(c) : null;
    rows.push(`| chromate \`status\` (agent-browser: \`get url\`, its cheapest query, for reference), ms | ${fmt(c)} | ${fmt(a)} | ${ratio(m, a.length ? median(a) : null)} | < 5 ms | ${m == null ? "" : m < 5 ? "met" : `**missed** (${(m / 5).toFixed(2)}×)`} |`);
  }
  rows.push(`| harness floor: \`/bin/true\` spawned and reaped the same way, ms | ${fmt(ms("floor", C))} | ${fmt(ms("floor", A))} | | | |`);
  {
    const c = warm[C].mem, a = warm[A].mem;
    const r = ratio(c?.rss, a?.rss);
    rows.push(`| daemon resident memory after the run (VmRSS; browser excluded), MB | ${(c.rss / 1024).toFixed(1)} (peak ${(c.hwm / 1024).toFixed(1)}) | ${(a.rss / 1024).toFixed(1)} (peak ${(a.hwm / 1024).toFixed(1)}) | ${r} | < 15 MB | ${c.rss / 1024 < 15 ? "met" : "**missed**"} |`);
    rows.push(`| browser tree RSS after the run (summed, shared pages counted per process), MB | ${(warm[C].browserRss / 1024).toFixed(0)} | ${(warm[A].browserRss / 1024).toFixed(0)} | ${ratio(warm[C].browserRss, warm[A].browserRss)} | | |`);
  }
  timeRow("close (not a target; the daemon and browser are then checked gone)", "close", Infinity);
  const scene = (key, ids) => ids.reduce((a, id) => a + median(ms(id, key)), 0);
  const cScene = scene(C, ["open-big"]), aScene = scene(A, ["open-big", "snap-big"]);

  console.log(`\n${N} repetitions, interleaved (order alternating by repetition); ${started.toISOString()}; load average ${loadStart.map((x) => x.toFixed(2)).join(" ")} at the start, ${os.loadavg().map((x) => x.toFixed(2)).join(" ")} at the end; ${os.cpus().length} CPUs`);
  console.log(`${versions.chromate} (${chromate}, at ${versions.commit}); ${versions.agentBrowser} (${agentBrowser}); ${versions.chromium} (${chromium}); pages from ${base}\n`);
  console.log("| step | chromate | agent-browser | chromate ÷ agent-browser | target | |");
  console.log("|---|---:|---:|---:|---|---|");
  for (const r of rows) console.log(r);
  console.log(`\nTo see bench-2000.html with refs: chromate \`navigate\` alone, ${cScene.toFixed(0)} ms, ${median(by("open-big", C)).toLocaleString("en-US")} B; agent-browser \`open\` + \`snapshot -i\`, ${aScene.toFixed(0)} ms, ${(median(by("open-big", A)) + median(by("snap-big", A))).toLocaleString("en-US")} B (two processes).`);
  console.log(`\nclick check (a link to a page whose image is held back ${SLOW_MS} ms; readyState and path read by the next command):`);
  for (const key of [C, A]) {
    const cs = clickCheck.filter((c) => c.tool === key);
    console.log(`- ${key}: click ${cs.map((c) => `${c.clickMs.toFixed(0)} ms`).join(", ")}; then ${[...new Set(cs.map((c) => c.after))].join(" / ")}`);
  }
  console.log(`\nfill check (#f holds "ann@example.com"; fill "${FILL_VALUE}", then the page's own counts of keydown and input events on it):`);
  for (const c of fillCheck) console.log(`- ${c.tool}: fill ${c.fillMs.toFixed(0)} ms; then ${c.after}`);
  if (process.env.CLI_SBS_JSON) {
    fs.writeFileSync(process.env.CLI_SBS_JSON, JSON.stringify({ versions, N, started, loadStart, loadEnd: os.loadavg(), samples, clickCheck, fillCheck, memory: Object.fromEntries(tools.map((t) => [t.key, warm[t.key].mem])) }, null, 1));
  }
}
