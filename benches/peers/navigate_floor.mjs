// browser_navigate against the raw-CDP floor, side by side in one run: a raw pipe client that
// sends Page.navigate and waits for Page.loadEventFired (nothing more: no snapshot, no wait
// after load), a second one that then reads every element's box and visibility in one
// Runtime.evaluate (the least any observation of the page does: the style and layout of the
// whole document that the renderer still owes after `load`), the floor again with chromate's
// `--disable-back-forward-cache`, chromate's browser_navigate (its
// wait after load and its observation included), optionally a baseline chromate binary and
// Playwright MCP, on the same pages, round-robin.
//
//   node benches/peers/navigate_floor.mjs <chromate binary> <base url> [repetitions=15]
//   CHROMATE_OLD=<baseline binary>   adds the baseline chromate (old against new in one run)
//   PEERS=<dir>                      adds Playwright MCP from <dir>/node_modules/@playwright/mcp
//
// <base url> serves tests/fixtures/pages (benches/README.md gives the command). Every client
// drives its own headless Chromium (/usr/bin/chromium or $CHROMIUM) with the same flags; each
// measured step is one navigate from the page before (about:blank first) to the named page.
// Prints the median and p90 per page and tool, and each tool's median over the floor's.
// Every process it starts is closed and checked gone by PID at the end.
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cdpPipe, spawnPiped } from "./cdp_pipe.mjs";

const [chromateBin, base, repsArg] = process.argv.slice(2);
if (!chromateBin || !base) {
  console.error("usage: node benches/peers/navigate_floor.mjs <chromate binary> <base url> [repetitions]");
  process.exit(2);
}
const N = Number(repsArg ?? 15);
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
const PAGES = ["login.html", "bench-2000.html", "bench-10000.html", "console.html"];
const work = fs.mkdtempSync(path.join(os.tmpdir(), "navigate-floor-"));
const now = () => performance.now();

// --- the raw pipe clients -------------------------------------------------------------------
// The least any observation of the page must do after `load`: read every element's box and
// whether it is visible, in one call (style and layout of the whole document, nothing more).
const LEAST_OBSERVATION = `(() => { let shown = 0; for (const el of document.querySelectorAll("*")) {
  const box = el.getBoundingClientRect(); if (box.width > 0 && el.checkVisibility()) shown++; } return shown; })()`;

function rawClient(observe, extra = []) {
  const profile = fs.mkdtempSync(path.join(work, "raw-profile-"));
  const child = spawnPiped(chromium, profile, extra);
  const { send, event } = cdpPipe(child);
  let session;
  return {
    key: observe ? "raw-observed" : extra.length ? "raw-flags" : "raw",
    label: observe ? "raw CDP + the least observation (one walk reading every box)"
      : extra.length ? `raw CDP floor with ${extra.join(" ")}`
        : "raw CDP floor (Page.navigate → loadEventFired)",
    pid: child.pid,
    async start() {
      const { targetInfos } = await send("Target.getTargets");
      const page = targetInfos.find((t) => t.type === "page");
      ({ sessionId: session } = await send("Target.attachToTarget", { targetId: page.targetId, flatten: true }));
      await send("Page.enable", {}, session);
    },
    async navigate(url) {
      const loaded = event((m) => m.method === "Page.loadEventFired" && m.sessionId === session);
      await send("Page.navigate", { url }, session);
      await loaded;
      if (observe) await send("Runtime.evaluate", { expression: LEAST_OBSERVATION, returnByValue: true }, session);
    },
    async close() {
      await send("Browser.close").catch(() => {});
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
    },
    pids: () => [child.pid],
  };
}

// --- MCP servers ----------------------------------------------------------------------------
function mcpServer(key, label, command, args, navigateCall) {
  const cwd = fs.mkdtempSync(path.join(work, `${key}-`));
  const transport = new StdioClientTransport({ command, args, cwd, env: process.env, stderr: "pipe" });
  const client = new Client({ name: "navigate-floor", version: "1.0.0" });
  let started = [];
  return {
    key, label,
    async start() {
      await client.connect(transport);
      await this.navigate("about:blank");
      started = [transport.pid, ...descendants(transport.pid)];
    },
    async navigate(url) {
      const [name, args] = navigateCall(url);
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
      if (result.isError) throw new Error(`${key}: ${JSON.stringify(result.content).slice(0, 400)}`);
    },
    async close() { await client.close(); },
    pids: () => started,
  };
}

function descendants(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch { /* gone meanwhile */ }
  }
  const out = [];
  const walk = (p) => { for (const c of children.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}

const chromateArgs = ["mcp", "--browser", chromium, "--artifacts-dir", "ARTIFACTS"];
// The floor again with the one launch flag of chromate's that changes a navigation's own cost
// (engine/src/launch/mod.rs): no back/forward cache.
const tools = [rawClient(false), rawClient(false, ["--disable-back-forward-cache"]), rawClient(true),
  mcpServer("chromate", process.env.CHROMATE_LABEL ?? "chromate", path.resolve(chromateBin), chromateArgs,
    (url) => ["browser_navigate", { url }])];
if (process.env.CHROMATE_OLD) {
  tools.push(mcpServer("chromate-old", process.env.CHROMATE_OLD_LABEL ?? "chromate (baseline)",
    path.resolve(process.env.CHROMATE_OLD), chromateArgs, (url) => ["browser_navigate", { url }]));
}
if (process.env.PEERS) {
  const cli = path.join(process.env.PEERS, "node_modules/@playwright/mcp/cli.js");
  const version = JSON.parse(fs.readFileSync(path.join(process.env.PEERS, "node_modules/@playwright/mcp/package.json"), "utf8")).version;
  tools.push(mcpServer("playwright", `Playwright MCP ${version}`, "node", [cli, "--browser", "chromium",
    "--executable-path", chromium, "--headless", "--isolated", "--no-sandbox", "--viewport-size", "1280x800",
    "--output-dir", "ARTIFACTS"], (url) => ["browser_navigate", { url }]));
}

const times = new Map(tools.map((t) => [t.key, new Map(PAGES.map((p) => [p, []]))]));
let failed = null;
try {
  for (const tool of tools) await tool.start();
  for (let rep = 0; rep < N; rep++) {
    for (const page of PAGES) {
      for (const tool of tools) {
        await tool.navigate("about:blank");
        const t0 = now();
        await tool.navigate(`${base}/${page}`);
        times.get(tool.key).get(page).push(now() - t0);
      }
    }
  }
} catch (err) {
  failed = err;
} finally {
  const all = tools.flatMap((t) => t.pids());
  for (const tool of tools) await tool.close().catch(() => {});
  const deadline = now() + 10_000;
  let alive = all;
  while (now() < deadline && (alive = all.filter((pid) => fs.existsSync(`/proc/${pid}`))).length) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const pid of alive) { try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } }
  if (alive.length) console.error(`killed survivors by PID: ${alive.join(" ")}`);
  fs.rmSync(work, { recursive: true, force: true });
}
if (failed) { console.error(failed); process.exit(1); }

const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log(`${N} navigations per page and tool, round-robin; Chromium ${chromium}`);
console.log(["page", ...tools.map((t) => t.label)].join(" | "));
for (const page of PAGES) {
  const floor = median(times.get("raw").get(page));
  const cells = tools.map((t) => {
    const xs = times.get(t.key).get(page);
    const m = median(xs);
    const ratio = t.key === "raw" ? "" : ` (${(m / floor).toFixed(2)}×)`;
    const least = median(times.get("raw-observed").get(page));
    const overLeast = t.key.startsWith("raw") ? "" : `, ${(m / least).toFixed(2)}× the least observation`;
    return `${m.toFixed(1)} ms p90 ${quantile(xs, 0.9).toFixed(1)}${ratio}${overLeast}`;
  });
  console.log([page, ...cells].join(" | "));
}
