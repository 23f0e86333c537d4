// Two chromate binaries, old and new, call by call: the steps whose side-by-side ratio is too close
// to call (a few milliseconds each), with many more repetitions than the side-by-side bench affords.
//
//   node benches/peers/old_new.mjs <old chromate> <new chromate> <base url> [repetitions=200]
//
// Both servers run at once, each with its own headless Chromium ($CHROMIUM or /usr/bin/chromium);
// every repetition calls each step on both, in an order that alternates (old first, then new first),
// so that the load of the moment falls on both alike. <base url> serves tests/fixtures/pages.
// Reports per step: the medians, their ratio, and the median of the per-repetition ratios.
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [oldBin, newBin, base, repsArg] = process.argv.slice(2);
if (!oldBin || !newBin || !base) {
  console.error("usage: node benches/peers/old_new.mjs <old chromate> <new chromate> <base url> [repetitions]");
  process.exit(2);
}
const N = Number(repsArg ?? 200);
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "old-new-"));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const text = (r) => (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const servers = [{ key: "old", bin: oldBin }, { key: "new", bin: newBin }];
const steps = [
  { id: "snap-small", label: "snapshot of form-submit.html", before: ["browser_navigate", { url: `${base}/form-submit.html` }], call: ["browser_snapshot", {}] },
  { id: "click", label: "click #validate-button (form-submit.html, no navigation)", call: ["browser_click", { selector: "#validate-button" }] },
  { id: "fill", label: "fill #email-field with a 15-character value", call: ["browser_fill", { selector: "#email-field", value: "ann@example.com" }] },
  { id: "nav-small", label: "navigate to form-submit.html", call: ["browser_navigate", { url: `${base}/form-submit.html` }] },
  { id: "snap-big", label: "snapshot of bench-2000.html", before: ["browser_navigate", { url: `${base}/bench-2000.html` }], call: ["browser_snapshot", {}] },
  { id: "nav-big", label: "navigate to bench-2000.html", call: ["browser_navigate", { url: `${base}/bench-2000.html` }] },
];
const loadAtStart = os.loadavg();
try {
  for (const s of servers) {
    s.client = new Client({ name: "old-new", version: "0" });
    s.transport = new StdioClientTransport({ command: path.resolve(s.bin), args: ["mcp", "--browser", chromium, "--artifacts-dir", path.join(work, s.key)], stderr: "pipe" });
    await s.client.connect(s.transport);
  }
  const call = async (s, [name, args]) => {
    const t0 = performance.now();
    const r = await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    const ms = performance.now() - t0;
    if (r.isError) throw new Error(`${s.key} ${name}: ${text(r).slice(0, 400)}`);
    return ms;
  };
  for (const st of steps) {
    st.ms = { old: [], new: [] };
    for (const s of servers) await call(s, st.before ?? st.call); // warm-up, untimed
    for (let i = 0; i < N; i++) {
      const order = i % 2 ? [servers[1], servers[0]] : servers;
      for (const s of order) {
        if (st.before) await call(s, st.before);
        st.ms[s.key].push(await call(s, st.call));
      }
    }
  }
} finally {
  for (const s of servers) { try { await s.client?.close(); } catch { /* closed */ } }
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`\n${N} repetitions per step, old and new alternating; load average ${loadAtStart.map((x) => x.toFixed(1)).join(" ")} at the start, ${os.loadavg().map((x) => x.toFixed(1)).join(" ")} at the end\n`);
console.log(`| step | old, median (p10–p90) | new, median (p10–p90) | new ÷ old | paired: median of new ÷ old |`);
console.log(`|---|---:|---:|---:|---:|`);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const f = (xs) => `${median(xs).toFixed(2)} ms (${pct(xs, 0.1).toFixed(2)}–${pct(xs, 0.9).toFixed(2)})`;
for (const st of steps) {
  const o = st.ms.old, n = st.ms.new;
  console.log(`| ${st.label} | ${f(o)} | ${f(n)} | ${(median(n) / median(o)).toFixed(3)} | ${median(n.map((x, i) => x / o[i])).toFixed(3)} |`);
}
