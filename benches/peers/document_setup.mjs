// What chromate's set-up of every new document costs the page's load, measured without chromate:
// raw pipe clients (one headless Chromium each), each with one piece of that set-up added to the
// Page domain alone, time Page.navigate → Page.loadEventFired on the same pages, round-robin.
//
//   node benches/peers/document_setup.mjs <base url> [repetitions=15]
//
// The pieces: the domains chromate enables (Runtime, Network, lifecycle events); the main-world
// timer count (`engine/src/js/pending.js`); and chromate's isolated-world installer, rebuilt here
// from `engine/src/js/*.js` the way `engine/src/js/mod.rs` joins them (comment lines dropped),
// once as it is and once with the element watch of `settle.js` started as the document is created
// instead of at DOMContentLoaded (what chromate did before). <base url> serves
// tests/fixtures/pages (benches/README.md gives the command). Run from the repository's root.
// Every browser is closed and checked gone by its PID at the end.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cdpPipe, spawnPiped, timedLoad } from "./cdp_pipe.mjs";

const [base, repsArg] = process.argv.slice(2);
if (!base) {
  console.error("usage: node benches/peers/document_setup.mjs <base url> [repetitions]");
  process.exit(2);
}
const N = Number(repsArg ?? 15);
const PAGES = ["login.html", "bench-2000.html", "bench-10000.html"];
const js = (name) => fs.readFileSync(`engine/src/js/${name}.js`, "utf8");
const lean = (src) => src.split("\n").map((line) => line.trim())
  .filter((line) => line && !line.startsWith("//") && !line.startsWith("/*") && !line.startsWith("*")).join("\n");
const MODULES = ["dom", "refs", "selector", "snapshot", "actionability", "locators", "screenshot", "a11y", "redact", "settle"];
const installer = (settle) => "(() => {\nif (globalThis.__chromate) return;\nconst C = {};\n"
  + MODULES.map((name) => `C.${name} = (${lean(name === "settle" ? settle : js(name))})(C);\n`).join("")
  + "Object.defineProperty(globalThis, \"__chromate\", {value: Object.freeze(C)});\n})()";
// settle.js as it was: the watch started by the installer, as the document is created.
const AT_DCL = /\n  if \(document\.readyState === "loading"\) \{\n[^]*?\n  \}\n/;
if (!AT_DCL.test(js("settle"))) throw new Error("settle.js no longer starts its watch at DOMContentLoaded: update this bench");
const settleAtCreation = js("settle").replace(AT_DCL, "\n  watch();\n");
const addScript = (source, worldName) => async (send, s) =>
  send("Page.addScriptToEvaluateOnNewDocument", { source, runImmediately: true, ...(worldName ? { worldName } : {}) }, s);
const SETUPS = [
  ["Page only", async () => {}],
  ["+ Runtime, Network, lifecycle", async (send, s) => {
    await send("Runtime.enable", {}, s); await send("Network.enable", {}, s);
    await send("Page.setLifecycleEventsEnabled", { enabled: true }, s);
  }],
  ["+ pending.js (main world)", addScript(js("pending"))],
  ["+ installer, watch from DOMContentLoaded", addScript(installer(js("settle")), "chromate")],
  ["+ installer, watch from creation", addScript(installer(settleAtCreation), "chromate")],
];
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1].toFixed(1);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "document-setup-"));
const clients = [];
try {
  for (const [label, setUp] of SETUPS) {
    const child = spawnPiped(process.env.CHROMIUM ?? "/usr/bin/chromium", fs.mkdtempSync(path.join(work, "profile-")));
    const { send, event } = cdpPipe(child);
    clients.push({ label, child, send, event });
    const { targetInfos } = await send("Target.getTargets");
    const target = targetInfos.find((t) => t.type === "page");
    const { sessionId } = await send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
    await send("Page.enable", {}, sessionId);
    await setUp(send, sessionId);
    clients.at(-1).session = sessionId;
  }
  console.log(`${N} navigations per page and set-up, round-robin; Page.navigate → loadEventFired, medians in ms`);
  console.log(["page", ...clients.map((c) => c.label)].join(" | "));
  for (const page of PAGES) {
    const rows = clients.map(() => []);
    for (let i = 0; i < N; i++) {
      for (const [k, client] of clients.entries()) {
        rows[k].push(await timedLoad(client, client.session, `${base}/${page}`));
      }
    }
    console.log([page, ...rows.map(median)].join(" | "));
  }
} finally {
  for (const { send, child } of clients) {
    await send("Browser.close").catch(() => {});
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
  }
  const alive = clients.filter(({ child }) => { try { process.kill(child.pid, 0); return true; } catch { return false; } });
  fs.rmSync(work, { recursive: true, force: true });
  if (alive.length) { console.error(`document_setup: still running: ${alive.map((c) => c.child.pid).join(" ")}`); process.exitCode = 1; }
}
