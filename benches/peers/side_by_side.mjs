// chromate side by side with Playwright MCP and chrome-devtools-mcp: latency, reply bytes, memory,
// the tokens the model receives under each host family's rules, and the calls an agent needs to act.
//
//   node benches/peers/side_by_side.mjs <peers dir> <chromate binary> <base url> [repetitions=7]
//   CHROMATE_OLD=<baseline chromate binary> node benches/peers/side_by_side.mjs ...   # old vs new in one run
//
// With CHROMATE_OLD set, a second chromate server (the baseline binary, labelled $CHROMATE_OLD_LABEL)
// runs in the same round-robin beside <chromate binary> (labelled $CHROMATE_LABEL), and the report
// adds the latency of new against old, step by step.
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
//
// What the model receives (the "model view") follows the two host families:
//   structuredContent-first (Claude Code, Codex, OpenCode, VS Code): JSON.stringify(structuredContent)
//     when the result has it, the text blocks dropped; otherwise the text blocks;
//   text-only (the other hosts): the text blocks.
// Text blocks are joined with "\n"; tokens are bytes / 4. Neither family reads a file a result points
// to unless the model calls a tool to read it, which the calls-to-act count charges as one call.
//
// Calls to act: per server and host family, from a fresh navigate to bench-2000.html until a click on
// a named button has succeeded, using only refs that appear in the model view (or in a file the view
// points to, read at the cost of one call); when the view lacks the ref the script must call the
// server's snapshot tool (chromate: the default view, or the full view `max_lines 5000` once a view
// said its limits were reached).
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [peersDir, chromateBin, base, repsArg] = process.argv.slice(2);
const chromateOld = process.env.CHROMATE_OLD;
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
const chromateServer = (key, label, bin) => ({
    key,
    label,
    command: path.resolve(bin),
    args: ["mcp", "--browser", chromium, "--artifacts-dir", "ARTIFACTS"],
    navigate: (url) => ["browser_navigate", { url }],
    snapshot: () => ["browser_snapshot", {}],
    click: (ref) => ["browser_click", { selector: `ref=${ref}` }],
    fill: (ref, value) => ["browser_fill", { selector: `ref=${ref}`, value }],
    // `e10: button "Validate" #validate-button`
    ref: (text, role, name) => new RegExp(`(e\\d+): ${role} "${name}"`).exec(text)?.[1],
    // The next look when the model view lacks the ref: the full view once a view said it was cut.
    look: (seen, tried) => (/snapshot limits reached/.test(seen) || tried.includes("default")
      ? (tried.includes("full") ? null : ["full", ["browser_snapshot", { max_lines: 5000 }]])
      : ["default", ["browser_snapshot", {}]]),
});
const servers = [
  chromateServer("chromate", process.env.CHROMATE_LABEL ?? `chromate ${chromateVersion()}`, chromateBin),
  ...(chromateOld ? [chromateServer("chromate-old", process.env.CHROMATE_OLD_LABEL ?? "chromate (baseline)", chromateOld)] : []),
  {
    key: "playwright",
    label: `Playwright MCP ${pkg("@playwright/mcp")}`,
    command: "node",
    args: [path.join(peersDir, "node_modules/@playwright/mcp/cli.js"),
      "--browser", "chromium", "--executable-path", chromium, "--headless", "--isolated",
      "--no-sandbox", "--viewport-size", "1280x800", "--output-dir", "ARTIFACTS"],
    navigate: (url) => ["browser_navigate", { url }],
    snapshot: () => ["browser_snapshot", {}],
    click: (ref, element = "Validate button") => ["browser_click", { target: ref, element }],
    fill: (ref, value) => ["browser_type", { target: ref, element: "Email textbox", text: value }],
    fillSlowly: (ref, value) => ["browser_type", { target: ref, element: "Email textbox", text: value, slowly: true }],
    // `- button "Validate" [ref=e9]`
    ref: (text, role, name) => new RegExp(`${role} "${name}"[^\\n]*\\[ref=([^\\]]+)\\]`).exec(text)?.[1],
    look: (seen, tried) => (tried.length ? null : ["snapshot", ["browser_snapshot", {}]]),
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
    look: (seen, tried) => (tried.length ? null : ["snapshot", ["take_snapshot", {}]]),
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

// What each host family gives the model (see the header): structuredContent-first hosts serialise
// structuredContent when present and drop the text blocks; text-only hosts give the text blocks.
const HOSTS = [
  { key: "sc", label: "structuredContent-first host (Claude Code, Codex, OpenCode, VS Code)" },
  { key: "text", label: "text-only host" },
];
const modelView = (result, host) =>
  (host === "sc" && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : textOf(result));

async function call(server, [name, args]) {
  const t0 = now();
  const result = await server.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const ms = now() - t0;
  const text = textOf(result);
  if (result.isError) throw new Error(`${server.key} ${name} ${JSON.stringify(args)} failed: ${text.slice(0, 600)}`);
  return {
    ms, text, bytes: bytes(text), fileBytes: referencedFileBytes(server, text), resultBytes: bytes(JSON.stringify(result)),
    model: Object.fromEntries(HOSTS.map((h) => [h.key, bytes(modelView(result, h.key))])),
    result,
  };
}

// One measured figure: per server, the samples of ms and the reply sizes.
const figures = [];
function figure(id, label) { const f = { id, label, samples: {} }; figures.push(f); return f; }
function record(f, server, r) { delete r.result; (f.samples[server.key] ??= []).push(r); }

// Round-robin: for i in 0..n, for each server (that supports the step): prepare (untimed), measure.
// The order rotates by one server each repetition (A B C D, B C D A, ...), so that no server always
// follows the same one (with CHROMATE_OLD, old and new chromate take each position alike).
async function roundRobin(f, n, step) {
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < servers.length; j++) {
      const s = servers[(i + j) % servers.length];
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

// --- calls to act --------------------------------------------------------------------------
// Two named buttons of bench-2000.html, first in document order for every server: "Weekly" in the
// first screenful (within chromate's default view), "Export" half-way down the page (past it).
const ACT_TARGETS = [
  { role: "button", name: "Weekly", where: "near the top" },
  { role: "button", name: "Export", where: "half-way down" },
];
const acts = [];
// Refs are looked for in the model view as the model would read it: a JSON view also as its string
// leaves, one a line (chromate's old structuredContent holds the snapshot lines as JSON strings).
function readable(view) {
  try {
    const leaves = [];
    const walk = (v) => { if (typeof v === "string") leaves.push(v); else if (v && typeof v === "object") Object.values(v).forEach(walk); };
    walk(JSON.parse(view));
    return `${view}\n${leaves.join("\n")}`;
  } catch { return view; }
}
// A file the view points to instead of carrying: chromate's spill, Playwright's snapshot file.
function pointedFile(server, view) {
  const m = /\(full output: (.*?), \d+ bytes\)/.exec(view) ?? /\[Snapshot\]\(([^)]+)\)/.exec(view);
  if (!m) return null;
  return path.isAbsolute(m[1]) ? m[1] : path.join(server.cwd, m[1]);
}
async function callsToAct(s, host, target) {
  const steps = [];
  let view = "";
  let ref;
  const see = (v, what) => { steps.push(what); view = readable(v); ref = s.ref(view, target.role, target.name); };
  const r0 = await call(s, s.navigate(`${base}/${BIG}`));
  see(modelView(r0.result, host), s.navigate("")[0]);
  const tried = [];
  const readFiles = new Set();
  while (!ref) {
    const file = pointedFile(s, view);
    if (file && !readFiles.has(file)) { // the model reads the file with the host's file tool: one call
      readFiles.add(file);
      see(fs.readFileSync(file, "utf8"), "read file");
      continue;
    }
    const next = s.look(view, tried);
    if (!next) break;
    tried.push(next[0]);
    const r = await call(s, next[1]);
    see(modelView(r.result, host), `${next[1][0]}${Object.keys(next[1][1]).length ? " " + JSON.stringify(next[1][1]) : ""}`);
  }
  if (!ref) return { calls: null, steps: [...steps, "(not found)"] };
  const c = await call(s, s.click(ref, `${target.name} button`));
  steps.push(s.click(ref)[0]);
  return { calls: steps.length, steps, clicked: !c.result.isError };
}

// --- run ---------------------------------------------------------------------------------
const loadAtStart = os.loadavg();
const startup = { init: figure("init", "spawn → `initialize` answered"), firstNav: figure("firstNav", `spawn → first navigate result (${FORM})`) };
const cleanupNotes = [];
let restarts = 0; // processes started by the restart figures, each checked gone
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
    record(startup.firstNav, s, { ms: now() - t0, bytes: nav.bytes, fileBytes: nav.fileBytes, resultBytes: nav.resultBytes, model: nav.model });
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
    const chs = servers.filter((s) => s.key.startsWith("chromate"));
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < chs.length; j++) { const ch = chs[(i + j) % chs.length]; record(f, ch, await call(ch, ["browser_snapshot", { max_lines: 5000 }])); }
    }
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

  // Start-up of chromate, repeated: with one sample per server above, old against new needs more.
  // Each repetition spawns a fresh server (the chromate servers in rotating order), times
  // `initialize` and the first navigate, closes it and checks its processes gone.
  {
    const chs = servers.filter((s) => s.key.startsWith("chromate"));
    const ri = figure("restart-init", "chromate restarted: spawn → `initialize` answered");
    const rn = figure("restart-nav", `chromate restarted: spawn → first navigate result (${FORM})`);
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < chs.length; j++) {
        const ch = chs[(i + j) % chs.length];
        const client = new Client({ name: "side-by-side", version: "0" });
        const transport = new StdioClientTransport({ command: ch.command, args: ch.args, cwd: ch.cwd, env: process.env, stderr: "pipe" });
        const before = crashpadHandlers();
        const t0 = now();
        await client.connect(transport);
        record(ri, ch, { ms: now() - t0 });
        const r = await client.callTool({ name: "browser_navigate", arguments: { url: `${base}/${FORM}` } }, undefined, { timeout: 120_000 });
        record(rn, ch, { ms: now() - t0 });
        if (r.isError) throw new Error(`${ch.key} restarted: navigate failed: ${textOf(r).slice(0, 600)}`);
        const pid = transport.pid;
        const started = [pid, ...descendants(pid)];
        const crash = [...crashpadHandlers()].filter(([p]) => !before.has(p));
        await client.close();
        const deadline = now() + 8000;
        for (const p of started) {
          while (alive(p) && now() < deadline) await new Promise((res) => setTimeout(res, 50));
          if (alive(p)) { cleanupNotes.push(`${ch.key} restarted: pid ${p} still running after close; killed`); try { process.kill(p, "SIGKILL"); } catch { /* gone */ } }
        }
        for (const [p, start] of crash) {
          while (sameProcess(p, start) && alive(p) && now() < deadline) await new Promise((res) => setTimeout(res, 50));
          if (sameProcess(p, start) && alive(p)) { cleanupNotes.push(`${ch.key} restarted: crash handler ${p} still running; killed`); try { process.kill(p, "SIGKILL"); } catch { /* gone */ } }
        }
        restarts += started.length + crash.length;
      }
    }
  }

  // Calls to act on the 2,000-element page, per server and host family (see the header).
  for (const s of servers) {
    for (const h of HOSTS) {
      for (const t of ACT_TARGETS) acts.push({ server: s, host: h.key, target: t, ...(await callsToAct(s, h.key, t)) });
    }
  }

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
console.log(`\n${N} repetitions, round-robin; load average (1, 5, 15 min) ${loadAtStart.map((x) => x.toFixed(1)).join(" ")} at the start, ${os.loadavg().map((x) => x.toFixed(1)).join(" ")} at the end; ` +
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
console.log(`cleanup: ${cleanupNotes.length ? cleanupNotes.join("; ") : `all ${servers.reduce((a, s) => a + (s.started?.length ?? 0) + (s.crashpad?.length ?? 0), 0)} processes started (servers, their browsers, the browsers' crash handlers) exited after close${restarts ? `, and so did all ${restarts} of the restart figures` : ""}`}`);

// --- what the model receives, by host family ---------------------------------------------------
// The scenario: one of each measured step, in the bench's order (the click and the fill are by the
// ref of an untimed snapshot taken just before, which is not counted here).
const SCENARIO = [`nav-${FORM}`, `snap-${FORM}`, `nav-${BIG}`, `snap-${BIG}`, "click", "fill"];
const tok = (b) => Math.round(b / 4);
const fmtTok = (b) => (b == null ? "—" : `${fmtB(b)} B (${fmtB(tok(b))} tok)`);
const modelMedian = (f, s, h) => (f?.samples[s.key]?.length && f.samples[s.key][0].model ? median(f.samples[s.key].map((r) => r.model[h])) : null);
const chromates = servers.filter((s) => s.key.startsWith("chromate"));
const totals = {};
for (const h of HOSTS) {
  console.log(`\nWhat the model receives per step, ${h.label}: median bytes of the model view (tokens = bytes / 4)\n`);
  console.log(`| step | ${cols.join(" | ")} |`);
  console.log(`|---|${cols.map(() => "---:").join("|")}|`);
  for (const f of figures) {
    if (f.id === "init" || !servers.some((s) => modelMedian(f, s, h.key) != null)) continue;
    const inScenario = SCENARIO.includes(f.id);
    console.log(`| ${f.label}${inScenario ? "" : " (not in the scenario)"} | ${servers.map((s) => fmtTok(modelMedian(f, s, h.key))).join(" | ")} |`);
  }
  totals[h.key] = Object.fromEntries(servers.map((s) => [s.key, SCENARIO.reduce((a, id) => a + (modelMedian(figures.find((f) => f.id === id), s, h.key) ?? 0), 0)]));
  console.log(`| **scenario total** (${SCENARIO.length} steps) | ${servers.map((s) => `**${fmtTok(totals[h.key][s.key])}**`).join(" | ")} |`);
  const leanest = peers.reduce((a, p) => (a == null || totals[h.key][p.key] < totals[h.key][a.key] ? p : a), null);
  if (leanest) {
    for (const c of chromates) {
      const r = totals[h.key][c.key] / totals[h.key][leanest.key];
      console.log(`\n${c.label}, ${h.key === "sc" ? "structuredContent-first" : "text-only"} host: scenario total ${fmtB(totals[h.key][c.key])} B = ${r.toFixed(3)} × the leanest peer's (${leanest.label}, ${fmtB(totals[h.key][leanest.key])} B): ${r < 0.2 ? "under" : "NOT under"} 1/5`);
    }
  }
}

// --- calls to act ----------------------------------------------------------------------------
console.log(`\nCalls to act on ${BIG}: from navigate to a successful click on the named button, using only refs the model view showed (navigate included)\n`);
const actCols = HOSTS.flatMap((h) => ACT_TARGETS.map((t) => `${h.key === "sc" ? "structuredContent-first" : "text-only"} host, button "${t.name}" (${t.where})`));
console.log(`| server | ${actCols.join(" | ")} |`);
console.log(`|---|${actCols.map(() => "---").join("|")}|`);
for (const s of servers) {
  const cells = HOSTS.flatMap((h) => ACT_TARGETS.map((t) => {
    const a = acts.find((x) => x.server === s && x.host === h.key && x.target === t);
    return a ? `${a.calls ?? "not reached"}${a.clicked === false ? " (click failed)" : ""}: ${a.steps.join(" → ")}` : "—";
  }));
  console.log(`| ${s.label} | ${cells.join(" | ")} |`);
}

// --- latency, new against old ----------------------------------------------------------------
const oldS = servers.find((s) => s.key === "chromate-old");
if (oldS) {
  const newS = servers[0];
  console.log(`\nLatency, ${newS.label} against ${oldS.label}, in the same round-robin (median (min–max); ratio new ÷ old of the medians; ` +
    `and the median of the per-repetition ratios, new ÷ old within the same repetition, which the load of the moment affects less)\n`);
  console.log(`| step | ${oldS.label} | ${newS.label} | new ÷ old | paired: median (min–max) |`);
  console.log(`|---|---:|---:|---:|---:|`);
  for (const f of figures) {
    const o = f.samples[oldS.key], n = f.samples[newS.key];
    if (!o?.length || !n?.length) continue;
    const r = median(n.map((x) => x.ms)) / median(o.map((x) => x.ms));
    const pr = o.length === n.length && o.length > 1 ? n.map((x, i) => x.ms / o[i].ms) : null;
    const prCell = pr ? `${median(pr).toFixed(3)} (${Math.min(...pr).toFixed(2)}–${Math.max(...pr).toFixed(2)})` : "";
    console.log(`| ${f.label}${o.length === 1 ? " (one sample)" : ""} | ${fmtMs(o.map((x) => x.ms))} | ${fmtMs(n.map((x) => x.ms))} | ${r.toFixed(3)}${r > 1.05 ? " **over 5%**" : ""} | ${prCell} |`);
  }
}

// Raw figures for combining runs: SIDE_BY_SIDE_JSON=<file>.
if (process.env.SIDE_BY_SIDE_JSON) {
  fs.writeFileSync(process.env.SIDE_BY_SIDE_JSON, JSON.stringify({
    repetitions: N, loadAtStart, loadAtEnd: os.loadavg(), servers: servers.map((s) => ({ key: s.key, label: s.label })),
    figures: figures.map((f) => ({ id: f.id, label: f.label, samples: f.samples })),
    totals, acts: acts.map((a) => ({ server: a.server.key, host: a.host, target: a.target.name, calls: a.calls, steps: a.steps, clicked: a.clicked })),
  }, null, 1));
}
