// What the renderer is still doing right after `load`: a raw pipe client (no chromate) navigates
// each page from about:blank, waits for Page.loadEventFired, and then times four calls in a row:
// the first Runtime.evaluate of `1`, a second one, one animation frame, and a querySelectorAll.
// The first call after `load` waits while the page's main thread finishes what follows the load
// event (style, layout, the first frame): any observation taken after `load` waits for it too.
//
//   node benches/peers/after_load.mjs <base url> [repetitions=9]
//
// <base url> serves tests/fixtures/pages (benches/README.md gives the command). Headless
// /usr/bin/chromium (or $CHROMIUM) with the benches' flags; prints the median per page and call.
// The browser is closed and checked gone by its PID at the end.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cdpPipe, spawnPiped, timedLoad } from "./cdp_pipe.mjs";

const [base, repsArg] = process.argv.slice(2);
if (!base) {
  console.error("usage: node benches/peers/after_load.mjs <base url> [repetitions]");
  process.exit(2);
}
const N = Number(repsArg ?? 9);
const PAGES = ["login.html", "bench-2000.html", "bench-10000.html", "console.html"];
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "after-load-"));
const child = spawnPiped(process.env.CHROMIUM ?? "/usr/bin/chromium", profile);
const { send, event } = cdpPipe(child);
const now = () => performance.now();
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1].toFixed(1);

try {
  const { targetInfos } = await send("Target.getTargets");
  const target = targetInfos.find((t) => t.type === "page");
  const { sessionId: s } = await send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
  await send("Page.enable", {}, s);
  const evaluate = (expression) => send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, s);
  console.log(`${N} navigations per page; Chromium ${process.env.CHROMIUM ?? "/usr/bin/chromium"}; medians, ms`);
  console.log("page | Page.navigate → loadEventFired | first evaluate after load | second | one animation frame | querySelectorAll('*')");
  for (const page of PAGES) {
    const rows = [];
    for (let i = 0; i < N; i++) {
      const load = await timedLoad({ send, event }, s, `${base}/${page}`);
      const t1 = now();
      await evaluate("1");
      const t2 = now();
      await evaluate("1");
      const t3 = now();
      await evaluate("new Promise((r) => requestAnimationFrame(() => r(1)))");
      const t4 = now();
      await evaluate("document.querySelectorAll('*').length");
      rows.push([load, t2 - t1, t3 - t2, t4 - t3, now() - t4]);
    }
    console.log([page, ...[0, 1, 2, 3, 4].map((k) => median(rows.map((r) => r[k])))].join(" | "));
  }
} finally {
  await send("Browser.close").catch(() => {});
  if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
  let gone = false;
  try { process.kill(child.pid, 0); } catch { gone = true; }
  fs.rmSync(profile, { recursive: true, force: true });
  if (!gone) { console.error(`after_load: the browser ${child.pid} is still running`); process.exitCode = 1; }
}
