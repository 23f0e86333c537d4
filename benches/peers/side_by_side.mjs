// chromate side by side with Playwright MCP and chrome-devtools-mcp: latency, reply bytes, memory.
//
//   node benches/peers/side_by_side.mjs <peers dir> <chromate binary> <base url> [repetitions=7]
//
// <peers dir> holds `node_modules/@playwright/mcp` and `node_modules/chrome-devtools-mcp`,
// installed without browser downloads (see benches/README.md, "Side by side with Playwright MCP
// and chrome-devtools-mcp"); every server drives its own headless Debian Chromium
// (/usr/bin/chromium, or $CHROMIUM), and all three are driven over stdio by the same client,
// the TypeScript MCP SDK from tests/clients. <base url> serves tests/fixtures/pages.
//
// Each server is spawned in turn (spawn → initialize answered → first navigate result), then
// every measured call runs round-robin over the three servers (server A, B, C, A, B, C, ...), so
// that load on the shared machine falls on all of them alike. Reply bytes are the UTF-8 bytes of
// every text block of the result; a result that points to a file instead (Playwright's
// snapshot files, chromate's spill files) is also reported with the referenced file's size.
// Memory is read from /proc after the run: the server process's own VmRSS (and VmHWM), then the
// processes under it (the browser) summed, RSS and PSS. At the end every client is closed and
// every process that was started is checked gone; a survivor is killed by its PID and reported.
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [peersDir, chromateBin, base, repsArg] = process.argv.slice(2);
if (!peersDir || !chromateBin || !base) {
  console.error("usage: node benches/peers/side_by_side.mjs <peers dir> <chromate binary> <base url> [repetitions]");
  process.exit(2);
}
const N = Number(repsArg ?? 7);
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FORM = "form-submit.html"; // a search form and a validate form; #validate-button never navigates
const BIG = "bench-2000.html";
const FILL_VALUE = "ann@example.com"; // 15 characters, as in the action_latency bench
const work = fs.mkdtempSync(path.join(os.tmpdir(), "side-by-side-"));
const pkg = (name) => JSON.parse(fs.readFileSync(path.join(peersDir, "node_modules", name, "package.json"), "utf8")).version;

// --- the three servers -------------------------------------------------------------------
// Each gets its own working directory (Playwright writes snapshot files relative to it).
const servers = [
  {
    key: "chromate",
    label: `chromate ${chromateVersion()}`,
    command: path.resolve(chromateBin),
    args: ["mcp", "--browser", chromium, "--artifacts-dir", "ARTIFACTS"],
    navigate: (url) => ["browser_navigate", { url }],
    snapshot: () => ["browser_snapshot", {}],
    click: (ref) => ["browser_click", { selector: `ref=${ref}` }],
    fill: (ref, value) => ["browser_fill", { selector: `ref=${ref}`, value }],
    // `e10: button "Validate" #validate-button`
    ref: (text, role, name) => new RegExp(`(e\\d+): ${role} "${name}"`).exec(text)?.[1],
  },
  {
    key: "playwright",
    label: `Playwright MCP ${pkg("@playwright/mcp")}`,
    command: "node",
    args: [path.join(peersDir, "node_modules/@playwright/mcp/cli.js"),
      "--browser", "chromium", "--executable-path", chromium, "--headless", "--isolated",
      "--no-sandbox", "--viewport-size", "1280x800", "--output-dir", "ARTIFACTS"],
    navigate: (url) => ["browser_navigate", { url }],
    snapshot: () => ["browser_snapshot", {}],
    click: (ref) => ["browser_click", { target: ref, element: "Validate button" }],
    fill: (ref, value) => ["browser_type", { target: ref, element: "Email textbox", text: value }],
    fillSlowly: (ref, value) => ["browser_type", { target: ref, element: "Email textbox", text: value, slowly: true }],
    // `- button "Validate" [ref=e9]`
    ref: (text, role, name) => new RegExp(`${role} "${name}"[^\\n]*\\[ref=([^\\]]+)\\]`).exec(text)?.[1],
  },
  {
    key: "cdm",
    label: `chrome-devtools-mcp ${pkg("chrome-devtools-mcp")}`,
    command: "node",
    args: [path.join(peersDir, "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
      "--headless", "--isolated", "--executablePath", chromium,
      "--chromeArg=--no-sandbox", "--chromeArg=--disable-gpu", "--usageStatistics=false",
      "--viewport", "1280x800", "--no-page-id-routing"],
    env: { CI: "1" },
    navigate: (url) => ["navigate_page", { type: "url", url }],
    snapshot: () => ["take_snapshot", {}],
    click: (uid) => ["click", { uid }],
    fill: (uid, value) => ["fill", { uid, value }],
    // `uid=1_10 button "Validate"`
    ref: (text, role, name) => new RegExp(`uid=(\\S+) ${role} "${name}"`).exec(text)?.[1],
  },
];
// Playwright MCP waits a fixed `--timeout-settle` (500 ms) after each click and each slow type; with
// SETTLE0=1 a fourth server, Playwright MCP with `--timeout-settle 0`, shows what is left without it.
if (process.env.SETTLE0 === "1") {
  const pw = servers.find((s) => s.key === "playwright");
  servers.push({ ...pw, key: "playwright0", label: `${pw.label} --timeout-settle 0`, args: [...pw.args, "--timeout-settle", "0"] });
}

function chromateVersion() {
  try {
    const toml = fs.readFileSync(new URL("../../Cargo.toml", import.meta.url), "utf8");
    return /^version\s*=\s*"([^"]+)"/m.exec(toml)?.[1] ?? "";
  } catch { return ""; }
}

// --- helpers -----------------------------------------------------------------------------
const now = () => performance.now();
const mb = (kb) => (kb / 1024).toFixed(1);
const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const bytes = (s) => Buffer.byteLength(s, "utf8");
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// Files a result points to instead of carrying: chromate `(full output: <path>, N bytes)`,
// Playwright markdown links `[Snapshot](<relative path>)` resolved against the server's cwd.
function referencedFileBytes(server, text) {
  let total = 0;
  for (const m of text.matchAll(/\(full output: (.*?), (\d+) bytes\)/g)) total += Number(m[2]);
  for (const m of text.matchAll(/\[Snapshot\]\(([^)]+)\)/g)) {
    const p = path.isAbsolute(m[1]) ? m[1] : path.join(server.cwd, m[1]);
    try { total += fs.statSync(p).size; } catch { /* gone or unreadable */ }
  }
  return total;
}

async function call(server, [name, args]) {
  const t0 = now();
  const result = await server.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const ms = now() - t0;
  const text = textOf(result);
  if (result.isError) throw new Error(`${server.key} ${name} ${JSON.stringify(args)} failed: ${text.slice(0, 600)}`);
  return { ms, text, bytes: bytes(text), fileBytes: referencedFileBytes(server, text), resultBytes: bytes(JSON.stringify(result)) };
}

// One measured figure: per server, the samples of ms and the reply sizes.
const figures = [];
function figure(id, label) { const f = { id, label, samples: {} }; figures.push(f); return f; }
function record(f, server, r) { (f.samples[server.key] ??= []).push(r); }

// Round-robin: for i in 0..n, for each server (that supports the step): prepare (untimed), measure.
async function roundRobin(f, n, step) {
  for (let i = 0; i < n; i++) {
    for (const s of servers) {
      const r = await step(s, i);
      if (r) record(f, s, r);
    }
  }
}

// --- /proc -------------------------------------------------------------------------------
function procStatus(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? 0);
    return { rss: kb("VmRSS"), hwm: kb("VmHWM"), name: /^Name:\s+(.*)$/m.exec(s)?.[1] };
  } catch { return null; }
}
function pss(pid) {
  try { return Number(/^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0); } catch { return 0; }
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
// Chromium's crash handlers double-fork away from the browser (parent init, own session), so the
// process tree misses them: those that appear while a server launches its browser are its own.
function crashpadHandlers() {
  const out = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!fs.readlinkSync(`/proc/${d}/exe`).endsWith("/chrome_crashpad_handler")) continue;
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      out.set(Number(d), stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]); // start time
    } catch { /* exited, or not ours to read */ }
  }
  return out;
}
const sameProcess = (pid, start) => { try { const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8"); return st.slice(st.lastIndexOf(")") + 2).split(" ")[19] === start; } catch { return false; } };
const alive = (pid) => { try { process.kill(pid, 0); return fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8")); } catch { return false; } };

// --- run ---------------------------------------------------------------------------------
const startup = { init: figure("init", "spawn → `initialize` answered"), firstNav: figure("firstNav", `spawn → first navigate result (${FORM})`) };
const cleanupNotes = [];
try {
  for (const s of servers) {
    s.cwd = fs.mkdtempSync(path.join(work, `${s.key}-`));
    s.args = s.args.map((a) => (a === "ARTIFACTS" ? path.join(s.cwd, "artifacts") : a));
    s.client = new Client({ name: "side-by-side", version: "0" });
    s.transport = new StdioClientTransport({ command: s.command, args: s.args, cwd: s.cwd, env: { ...process.env, ...(s.env ?? {}) }, stderr: "pipe" });
    s.stderr = "";
    s.transport.stderr?.on("data", (d) => { s.stderr = (s.stderr + d).slice(-4000); });
    const before = crashpadHandlers();
    const t0 = now();
    await s.client.connect(s.transport);
    record(startup.init, s, { ms: now() - t0 });
    s.pid = s.transport.pid;
    s.version = s.client.getServerVersion();
    const nav = await call(s, s.navigate(`${base}/${FORM}`));
    record(startup.firstNav, s, { ms: now() - t0, bytes: nav.bytes, fileBytes: nav.fileBytes, resultBytes: nav.resultBytes });
    s.crashpad = [...crashpadHandlers()].filter(([pid]) => !before.has(pid));
  }

  for (const page of [FORM, BIG]) {
    const f = figure(`nav-${page}`, `navigate to ${page}`);
    await roundRobin(f, N, (s) => call(s, s.navigate(`${base}/${page}`)));
    const g = figure(`snap-${page}`, `snapshot of ${page}`);
    await roundRobin(g, N, (s) => call(s, s.snapshot()));
  }
  {
    const f = figure("snapfull-" + BIG, `chromate full view (max_lines 5000) of ${BIG}`);
    const ch = servers.find((s) => s.key === "chromate");
    for (let i = 0; i < N; i++) record(f, ch, await call(ch, ["browser_snapshot", { max_lines: 5000 }]));
  }

  // Actions on the form page, each by the ref of a fresh (untimed) snapshot of the server's own.
  for (const s of servers) await call(s, s.navigate(`${base}/${FORM}`));
  const byRef = async (s, role, name) => {
    const snap = await call(s, s.snapshot());
    const ref = s.ref(snap.text, role, name);
    if (!ref) throw new Error(`${s.key}: no ${role} "${name}" in its snapshot:\n${snap.text.slice(0, 2000)}`);
    return ref;
  };
  const click = figure("click", `click "Validate" by ref (${FORM}, no navigation)`);
  await roundRobin(click, N, async (s) => call(s, s.click(await byRef(s, "button", "Validate"))));
  const fill = figure("fill", `fill "Email" by ref with a 15-character value`);
  await roundRobin(fill, N, async (s) => call(s, s.fill(await byRef(s, "textbox", "Email"), FILL_VALUE)));
  const slow = figure("fillSlowly", "Playwright `browser_type slowly:true` (per-character keys)");
  await roundRobin(slow, N, async (s) => (s.fillSlowly ? call(s, s.fillSlowly(await byRef(s, "textbox", "Email"), FILL_VALUE)) : null));

  // Memory after the run.
  for (const s of servers) {
    s.mem = procStatus(s.pid);
    s.tree = descendants(s.pid);
    const procs = [...s.tree, ...s.crashpad.map(([p]) => p)].map((p) => ({ pid: p, st: procStatus(p), pss: pss(p) })).filter((p) => p.st);
    s.browserRss = procs.reduce((a, p) => a + p.st.rss, 0);
    s.browserPss = procs.reduce((a, p) => a + p.pss, 0);
    s.browserProcs = procs.length;
    const kind = (pid) => {
      // Chromium rewrites its children's command lines into one space-separated string.
      const cmd = (() => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "); } catch { return ""; } })();
      const type = /(?:^| )--type=(\S+)/.exec(cmd)?.[1];
      const sub = /--utility-sub-type=(\w+)/.exec(cmd)?.[1];
      return type ? (sub ? `${type} ${sub}` : type) : procStatus(pid)?.name === "chromium" ? "browser" : procStatus(pid)?.name;
    };
    s.browserNames = Object.entries(procs.reduce((a, p) => { const k = kind(p.pid); a[k] ??= [0, 0]; a[k][0] += 1; a[k][1] += p.pss; return a; }, {}))
      .map(([n, [k, kb]]) => `${k} ${n} ${mb(kb)} MB`).join(", ");
  }
} finally {
  // Close every client; then make sure each server and everything under it is gone.
  for (const s of servers) {
    if (!s.client) continue;
    const tree = s.pid ? descendants(s.pid) : [];
    s.started = [s.pid, ...new Set([...(s.tree ?? []), ...tree])].filter(Boolean);
    s.crashpad ??= [];
    try { await s.client.close(); } catch (e) { cleanupNotes.push(`${s.key}: close failed: ${e.message}`); }
  }
  const deadline = now() + 8000;
  for (const s of servers) {
    for (const pid of s.started ?? []) {
      while (alive(pid) && now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (alive(pid)) {
        cleanupNotes.push(`${s.key}: pid ${pid} (${procStatus(pid)?.name}) still running after close; killed`);
        try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
      }
    }
    for (const [pid, start] of s.crashpad ?? []) {
      while (sameProcess(pid, start) && alive(pid) && now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (sameProcess(pid, start) && alive(pid)) {
        cleanupNotes.push(`${s.key}: crash handler pid ${pid} still running after close; killed`);
        try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
      }
    }
  }
  fs.rmSync(work, { recursive: true, force: true });
}

// --- report ------------------------------------------------------------------------------
const fmtMs = (xs) => {
  const m = median(xs);
  const d = m >= 100 ? 0 : 1;
  return xs.length > 1 ? `${m.toFixed(d)} ms (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})` : `${m.toFixed(d)} ms`;
};
const fmtB = (n) => n.toLocaleString("en-US");
const fmtBytes = (rs) => {
  const b = median(rs.map((r) => r.bytes)), lo = Math.min(...rs.map((r) => r.bytes)), hi = Math.max(...rs.map((r) => r.bytes));
  const f = median(rs.map((r) => r.fileBytes ?? 0));
  const w = median(rs.map((r) => r.resultBytes));
  return `${fmtB(b)} B${lo !== hi ? ` (${fmtB(lo)}–${fmtB(hi)})` : ""}${f ? ` + file ${fmtB(f)} B` : ""}; result ${fmtB(w)} B`;
};
const ratio = (a, b) => (a != null && b ? (a / b).toFixed(2) : "");
const cols = servers.map((s) => s.label);
const peers = servers.filter((s) => s.key === "playwright" || s.key === "cdm");
console.log(`\n${N} repetitions, round-robin; ${os.loadavg().map((x) => x.toFixed(1)).join(" ")} load at the end; ` +
  `servers: ${servers.map((s) => `${s.label} (serverInfo ${s.version?.name} ${s.version?.version})`).join(", ")}; browser ${chromium}\n`);
console.log(`| figure | ${cols.join(" | ")} | ${peers.map((p) => `chromate ÷ ${p.key === "playwright" ? "Playwright" : "cdm"}`).join(" | ")} |`);
console.log(`|---|${cols.map(() => "---:").join("|")}|${peers.map(() => "---:").join("|")}|`);
const row = (label, cell, value) => {
  const ch = value(servers[0]);
  console.log(`| ${label} | ${servers.map((s) => cell(s) ?? "—").join(" | ")} | ${peers.map((p) => ratio(ch, value(p))).join(" | ")} |`);
};
for (const f of figures) {
  const has = (s) => f.samples[s.key]?.length;
  row(`${f.label}, ms`, (s) => (has(s) ? fmtMs(f.samples[s.key].map((r) => r.ms)) : null), (s) => (has(s) ? median(f.samples[s.key].map((r) => r.ms)) : null));
  if (f.samples.chromate?.[0]?.bytes !== undefined || f.samples.playwright?.[0]?.bytes !== undefined)
    row(`${f.label}, reply bytes`, (s) => (has(s) ? fmtBytes(f.samples[s.key]) : null), (s) => (has(s) ? median(f.samples[s.key].map((r) => r.bytes + (r.fileBytes ?? 0))) : null));
}
row("server process RSS after the run, MB (VmRSS)", (s) => (s.mem ? mb(s.mem.rss) : null), (s) => s.mem?.rss);
row("server process peak RSS, MB (VmHWM)", (s) => (s.mem ? mb(s.mem.hwm) : null), (s) => s.mem?.hwm);
row("browser: processes (tree under the server + its crash handlers)", (s) => (s.browserProcs != null ? String(s.browserProcs) : null), () => null);
row("browser: RSS summed over those processes, MB", (s) => (s.browserRss != null ? mb(s.browserRss) : null), (s) => s.browserRss);
row("browser: PSS summed over those processes, MB", (s) => (s.browserPss != null ? mb(s.browserPss) : null), (s) => s.browserPss);
console.log(`\nReply bytes: the text blocks of the result (what the brief calls the reply), + the size of a file the text points to instead of carrying (chromate's spill file, Playwright's snapshot file); the ratio compares text + file. *result* is the whole serialised tool result (structuredContent included).`);
console.log(`\nbrowser processes of each server (count, kind, PSS): ${servers.map((s) => `${s.key}: ${s.browserNames}`).join("; ")}`);
console.log(`cleanup: ${cleanupNotes.length ? cleanupNotes.join("; ") : `all ${servers.reduce((a, s) => a + (s.started?.length ?? 0) + (s.crashpad?.length ?? 0), 0)} processes started (servers, their browsers, the browsers' crash handlers) exited after close`}`);
