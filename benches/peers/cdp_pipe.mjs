// A raw CDP client over Chromium's --remote-debugging-pipe (fds 3 and 4, NUL-framed JSON), for
// the benches that measure the browser with nothing of chromate's in between.
//
//   const cdp = cdpPipe(child);             // child spawned with stdio [.., "pipe", "pipe"]
//   await cdp.send("Page.enable", {}, sessionId);
//   const loaded = cdp.event((m) => m.method === "Page.loadEventFired");
import { spawn } from "node:child_process";

/** The flags every bench gives Chromium here (root, offline). */
export const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,800"];

/** Spawns `chromium` on about:blank with the pipe and `profile` as its user data directory
 *  (and `extra` flags after the usual ones). */
export function spawnPiped(chromium, profile, extra = []) {
  return spawn(chromium, [...FLAGS, ...extra, "--remote-debugging-pipe", `--user-data-dir=${profile}`, "about:blank"],
    { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
}

/** `send(method, params, sessionId)` → the result (rejects on a protocol error);
 *  `event(match)` → the first later event for which `match` is true. */
export function cdpPipe(child) {
  const write = child.stdio[3];
  const read = child.stdio[4];
  let nextId = 1;
  let buffered = Buffer.alloc(0);
  const pending = new Map();
  const waiters = [];
  read.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    let end;
    while ((end = buffered.indexOf(0)) >= 0) {
      const message = JSON.parse(buffered.subarray(0, end).toString("utf8"));
      buffered = buffered.subarray(end + 1);
      if (message.id && pending.has(message.id)) {
        pending.get(message.id)(message);
        pending.delete(message.id);
      } else if (message.method) {
        for (const w of waiters.splice(0)) if (!w(message)) waiters.push(w);
      }
    }
  });
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
    write.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
  });
  const event = (match) => new Promise((resolve) => waiters.push((m) => (match(m) ? (resolve(m), true) : false)));
  return { send, event };
}

/** Navigates the page of `sessionId` to about:blank, then to `url`; resolves to the milliseconds
 *  from the second Page.navigate to its Page.loadEventFired. */
export async function timedLoad({ send, event }, sessionId, url) {
  const loadOf = () => event((m) => m.method === "Page.loadEventFired" && m.sessionId === sessionId);
  const blank = loadOf();
  await send("Page.navigate", { url: "about:blank" }, sessionId);
  await blank;
  const loaded = loadOf();
  const started = performance.now();
  await send("Page.navigate", { url }, sessionId);
  await loaded;
  return performance.now() - started;
}
