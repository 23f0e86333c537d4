// Many agents on one machine (issue 18): N concurrent agents, each running the bench scenario
// (navigate form-submit.html, snapshot, fill "Email" by ref, click "Validate" by ref) ROUNDS times,
// against
//   (a) one `chromate mcp --http` server: N MCP sessions, N browser contexts in one Chromium;
//   (b) N `chromate mcp` stdio servers, a Chromium each;
//   (c) N Playwright MCP servers (`@playwright/mcp`, `--isolated`), a Chromium each;
// and, first, (a) with one agent: the single-agent median each step's p99 is held against.
//
//   node benches/peers/agents.mjs <peers dir> <chromate binary> <base url> [agents=20] [rounds=3]
//        [--think-ms MS] [--seed N] [--configs abc] [--trace FILE]
//
// --think-ms MS: each agent waits before each measured call, as an agent whose model thinks
// between calls does: MS × a uniform factor in [0.5, 1.5) drawn from a generator seeded by
// --seed (default 1) and the agent's index, so a run is repeatable; the wait is not measured.
// Without it agents call back to back. --configs picks the configurations (default abc; the
// single-agent run of (a) always runs first). --trace FILE writes one JSON line per measured
// step ({config, agent, round, step, start, end}, ms since the configuration started), to see
// where agents wait on each other. --configs p adds a serialization probe: N sessions of one
// `chromate mcp --http` each evaluate a script that waits 1000 ms in its page, all at once
// (after a navigate each); if the server, the shared browser connection or the browser made
// sessions wait on each other, the wall time would grow towards N seconds instead of staying
// near one.
//
// <peers dir> holds node_modules/@playwright/mcp (see benches/README.md, "Side by side with
// Playwright MCP and chrome-devtools-mcp"); <base url> serves tests/fixtures/pages. All clients are
// the TypeScript MCP SDK of tests/clients (Streamable HTTP for (a), stdio otherwise). Every
// server drives headless Debian Chromium ($CHROMIUM or /usr/bin/chromium).
//
// Latency: each step's wall time at the client, over every agent and round (N × ROUNDS samples a
// step), p50 and p99 (nearest rank); each agent's first navigate (the browser's launch, or its
// session's context) is not measured. Memory: once every agent finished (all pages still open),
// the PSS of every process of each server's tree (/proc/<pid>/smaps_rollup; the server and all
// its descendants: the browser and its renderers), summed over the servers of a configuration.
// CPU: user + system seconds of those trees over the measured part (the servers' own and their
// live descendants'; a renderer that ended meanwhile counts once its parent reaped it), and
// that over the wall time: how many of the machine's cores the configuration kept busy; and the
// servers' own processes alone (chromate or Playwright MCP's node, without the browsers).
// Every started process is checked gone at the end.
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
import { StreamableHTTPClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

const positional = [];
const options = { "--think-ms": "0", "--seed": "1", "--configs": "abc", "--trace": "" };
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i];
  if (arg in options) options[arg] = process.argv[++i] ?? "";
  else positional.push(arg);
}
const [peersDir, chromateBin, base, agentsArg, roundsArg] = positional;
const THINK_MS = Number(options["--think-ms"]);
const SEED = Number(options["--seed"]);
const CONFIGS = options["--configs"];
if (!peersDir || !chromateBin || !base || !(THINK_MS >= 0) || !Number.isInteger(SEED)) {
  console.error("usage: node benches/peers/agents.mjs <peers dir> <chromate binary> <base url> [agents] [rounds] [--think-ms MS] [--seed N] [--configs abc] [--trace FILE]");
  process.exit(2);
}
const AGENTS = Number(agentsArg ?? 20);
const ROUNDS = Number(roundsArg ?? 3);
const trace = options["--trace"] ? fs.openSync(options["--trace"], "w") : null;
/** mulberry32: a small seeded generator of floats in [0, 1). */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FORM = `${base}/form-submit.html`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "agents-bench-"));
const now = () => performance.now();
const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const chromateTools = {
  navigate: (url) => ["browser_navigate", { url }],
  snapshot: () => ["browser_snapshot", {}],
  fill: (ref, value) => ["browser_fill", { selector: `ref=${ref}`, value }],
  click: (ref) => ["browser_click", { selector: `ref=${ref}` }],
  ref: (text, role, name) => new RegExp(`(e\\d+): ${role} "${name}"`).exec(text)?.[1],
};
const playwrightTools = {
  navigate: (url) => ["browser_navigate", { url }],
  snapshot: () => ["browser_snapshot", {}],
  fill: (ref, value) => ["browser_type", { target: ref, element: "Email textbox", text: value }],
  click: (ref) => ["browser_click", { target: ref, element: "Validate button" }],
  ref: (text, role, name) => new RegExp(`${role} "${name}"[^\\n]*\\[ref=([^\\]]+)\\]`).exec(text)?.[1],
};

/** Every process of the tree under `pid` (itself included). */
function tree(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch { /* gone */ }
  }
  const all = [];
  const walk = (p) => { all.push(p); for (const c of children.get(p) ?? []) walk(c); };
  walk(pid);
  return all;
}
function pssKb(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
      if (m) total += Number(m[1]);
    } catch { /* gone */ }
  }
  return total;
}
/** CPU seconds (user + system, with reaped children's) of `pids`, from /proc/<pid>/stat. */
function cpuSeconds(pids, ownOnly = false) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
      if (!ownOnly) ticks += Number(fields[13]) + Number(fields[14]);
    } catch { /* gone */ }
  }
  return ticks / 100; // USER_HZ is 100 on Linux
}
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

async function httpServer() {
  const child = spawn(path.resolve(chromateBin), ["mcp", "--http", "127.0.0.1:0", "--browser", chromium, "--max-sessions", String(AGENTS + 1)], {
    env: { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: work }, stdio: ["ignore", "ignore", "pipe"],
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no address")), 30000);
    createInterface({ input: child.stderr }).on("line", (line) => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(line);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
  return { child, url };
}

async function connectHttp(url, name) {
  const client = new Client({ name, version: "0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, close: async () => { await transport.terminateSession(); await client.close(); } };
}

async function connectStdio(command, args, name) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: work }, stderr: "ignore", cwd: work });
  const client = new Client({ name, version: "0" });
  await client.connect(transport);
  return { client, pid: transport.pid, close: () => client.close() };
}

/** One agent's ROUNDS scenarios; pushes each step's ms into `samples`. */
async function agent(client, tools, samples, index, config, origin) {
  const random = seeded(SEED * 1000003 + index);
  let round = 0;
  const call = async (step, [name, args]) => {
    if (THINK_MS > 0) await new Promise((r) => setTimeout(r, THINK_MS * (0.5 + random())));
    const t = now();
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
    const end = now();
    samples[step].push(end - t);
    if (trace) fs.writeSync(trace, JSON.stringify({ config, agent: index, round, step, start: +(t - origin).toFixed(1), end: +(end - origin).toFixed(1) }) + "\n");
    if (result.isError) throw new Error(`${step}: ${textOf(result).slice(0, 300)}`);
    return result;
  };
  // Not measured: the first call launches the browser (or makes the session's context).
  const [name, args] = tools.navigate(FORM);
  await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  for (; round < ROUNDS; round++) {
    await call("navigate", tools.navigate(FORM));
    const snap = await call("snapshot", tools.snapshot());
    const text = textOf(snap);
    const email = tools.ref(text, "textbox", "Email");
    const validate = tools.ref(text, "button", "Validate");
    if (!email || !validate) throw new Error(`no refs in the snapshot: ${text.slice(0, 400)}`);
    await call("fill", tools.fill(email, "ann@example.com"));
    await call("click", tools.click(validate));
  }
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

async function run(label, connectAll, tools) {
  const samples = { navigate: [], snapshot: [], fill: [], click: [] };
  const { agents, roots, close } = await connectAll();
  const cpuBefore = roots.reduce((sum, pid) => sum + cpuSeconds(tree(pid)), 0);
  const serverBefore = cpuSeconds(roots, true);
  const started = now();
  await Promise.all(agents.map((a, i) => agent(a.client, tools, samples, i, label, started)));
  const wall = now() - started;
  const pss = roots.reduce((sum, pid) => sum + pssKb(tree(pid)), 0);
  const cpu = roots.reduce((sum, pid) => sum + cpuSeconds(tree(pid)), 0) - cpuBefore;
  const serverCpu = cpuSeconds(roots, true) - serverBefore;
  const pids = roots.flatMap((pid) => tree(pid));
  await close();
  const deadline = Date.now() + 15000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const left = pids.filter(alive);
  for (const pid of left) process.kill(pid, "SIGKILL");
  return { label, samples, pss, wall, left, cpu, serverCpu };
}

const http1 = async (n) => {
  const { child, url } = await httpServer();
  const agents = await Promise.all(Array.from({ length: n }, (_, i) => connectHttp(url, `agent-${i}`)));
  return {
    agents, roots: [child.pid],
    close: async () => {
      await Promise.all(agents.map((a) => a.close()));
      const exited = new Promise((r) => child.on("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
};
const stdioMany = (command, argsOf) => async () => {
  const agents = await Promise.all(Array.from({ length: AGENTS }, (_, i) => connectStdio(command, argsOf(i), `agent-${i}`)));
  return { agents, roots: agents.map((a) => a.pid), close: () => Promise.all(agents.map((a) => a.close())) };
};

const results = [];
results.push(await run("(a) chromate --http, 1 agent", () => http1(1), chromateTools));
if (CONFIGS.includes("a")) results.push(await run(`(a) chromate --http, ${AGENTS} sessions`, () => http1(AGENTS), chromateTools));
if (CONFIGS.includes("b")) results.push(await run(`(b) ${AGENTS} × chromate mcp (stdio)`, stdioMany(path.resolve(chromateBin), () => ["mcp", "--browser", chromium]), chromateTools));
const pwCli = path.join(peersDir, "node_modules/@playwright/mcp/cli.js");
if (CONFIGS.includes("c") && fs.existsSync(pwCli)) {
  const version = JSON.parse(fs.readFileSync(path.join(peersDir, "node_modules/@playwright/mcp/package.json"), "utf8")).version;
  results.push(await run(`(c) ${AGENTS} × Playwright MCP ${version} --isolated`, stdioMany("node", (i) => [pwCli,
    "--browser", "chromium", "--executable-path", chromium, "--headless", "--isolated", "--no-sandbox",
    "--viewport-size", "1280x800", "--output-dir", path.join(work, `pw-${i}`)]), playwrightTools));
}

const think = THINK_MS > 0 ? `, thinking ${THINK_MS} ms × [0.5, 1.5) before each call (seed ${SEED})` : ", back to back";
let probe = null;
if (CONFIGS.includes("p")) {
  const { agents, close } = await http1(AGENTS);
  await Promise.all(agents.map((a) => a.client.callTool({ name: "browser_navigate", arguments: { url: FORM } }, undefined, { timeout: 120000 })));
  const started = now();
  const each = await Promise.all(agents.map(async (a) => {
    const t = now();
    const result = await a.client.callTool({ name: "browser_advanced_eval", arguments: { js: "return await new Promise((resolve) => setTimeout(() => resolve(1), 1000))" } }, undefined, { timeout: 120000 });
    if (result.isError) throw new Error(`probe: ${textOf(result).slice(0, 300)}`);
    return now() - t;
  }));
  probe = { wall: now() - started, min: Math.min(...each), max: Math.max(...each) };
  await close();
}

console.log(`${AGENTS} agents × ${ROUNDS} rounds of navigate, snapshot, fill, click (${os.cpus().length} cores${think}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")})\n`);
console.log("| configuration | memory (PSS, MB) | navigate p50/p99 ms | snapshot p50/p99 | fill p50/p99 | click p50/p99 | wall s | CPU s (cores busy) | of it the servers' own |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of results) {
  const cell = (step) => `${pct(r.samples[step], 50).toFixed(0)} / ${pct(r.samples[step], 99).toFixed(0)}`;
  console.log(`| ${r.label} | ${(r.pss / 1024).toFixed(0)} | ${cell("navigate")} | ${cell("snapshot")} | ${cell("fill")} | ${cell("click")} | ${(r.wall / 1000).toFixed(1)} | ${r.cpu.toFixed(1)} (${(r.cpu / (r.wall / 1000)).toFixed(2)}) | ${r.serverCpu.toFixed(1)} |`);
}
const single = results[0];
const many = results.find((r) => r.label.startsWith(`(a) chromate --http, ${AGENTS}`));
const pw = results.find((r) => r.label.startsWith("(c)"));
console.log("");
for (const step of ["navigate", "snapshot", "fill", "click"]) {
  if (!many) break;
  const ratio = pct(many.samples[step], 99) / pct(single.samples[step], 50);
  console.log(`(a) ${step}: p99 with ${AGENTS} sessions = ${ratio.toFixed(2)} × the single-agent median`);
}
if (probe) console.log(`serialization probe: ${AGENTS} sessions each waiting 1000 ms in its page at once: wall ${probe.wall.toFixed(0)} ms, each call ${probe.min.toFixed(0)}–${probe.max.toFixed(0)} ms`);
if (pw && many) console.log(`(a) memory = ${(many.pss / pw.pss).toFixed(3)} × (c)'s`);
if (trace) fs.closeSync(trace);
const leaks = results.flatMap((r) => r.left);
console.log(leaks.length ? `LEFT RUNNING (killed): ${leaks.join(" ")}` : "every process ended");
fs.rmSync(work, { recursive: true, force: true });
