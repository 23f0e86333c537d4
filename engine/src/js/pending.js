// @ts-check
// pending: the work a page has scheduled for the next moments, for the wait after `load`
// (docs/mcp.md#observations). The one script chromate runs in a page's main world from the start
// of every document, since timers and animation frames live there and chromate's isolated world
// cannot see them: `setTimeout`, `requestAnimationFrame`, `requestIdleCallback` and their
// cancels, `fetch`, a response's body readers and `XMLHttpRequest`'s `send` are wrapped in
// proxies of the originals (so `toString`, `name` and `length` read as the browser's own), and a non-enumerable `Symbol.for("chromate.pending")` on `window`
// answers `{pending, sinceMs}`: the timers of at most SHORT_MS, the animation frames and the
// idle callbacks not yet run, the answers not yet handed to the page's handlers, and the
// milliseconds since such a callback last ran (-1: none).
//
// An answer is a `fetch`, a response's body read (`json`, `text`…) or an `XMLHttpRequest`:
// counted from the call until the page's handlers of its result have run, that is until a
// task after it settles (the handlers chained on a promise run as microtasks before any next
// task). So what a response's handler starts next (the next request, the results inserted) is
// seen however long the renderer takes to deliver the body: the network's end alone, as
// chromate reads it from CDP events, can arrive before the handler has run.
//
// A callback's depth is one more than that of the callback that scheduled it (a script or an
// event handler: 0). Beyond DEPTH nothing is counted: a page that polls or animates by
// rescheduling itself is at work for ever, and the wait's cap ends that, as it did before.
// Intervals are never counted for the same reason. A page that replaces these functions
// itself (zone.js wraps them again; that is fine) can only make the wait end sooner or at its
// cap: nothing here decides anything but how long chromate waits.
(() => {
  "use strict";
  const KEY = Symbol.for("chromate.pending");
  if (Object.prototype.hasOwnProperty.call(window, KEY)) return;
  const SHORT_MS = 500;
  const DEPTH = 3;
  /** @type {Set<number>} */
  const timers = new Set();
  /** @type {Set<number>} */
  const frames = new Set();
  /** @type {Set<number>} */
  const idle = new Set();
  let depth = 0;
  let lastRan = -1;

  /** A callback that forgets its id, notes the time and runs `callback` at `level`.
   *  @param {Function} callback
   *  @param {number} level
   *  @param {() => void} forget */
  function tracked(callback, level, forget) {
    /** @this {unknown} */
    return function () {
      forget();
      lastRan = performance.now();
      const saved = depth;
      depth = level;
      try {
        return Reflect.apply(callback, this, arguments);
      } finally {
        depth = saved;
      }
    };
  }

  /** Replaces `owner[name]` with a proxy whose `apply` is `apply(original, self, args)`.
   *  @param {any} owner `window` or a prototype: its property is read and written by a name given at run time.
   *  @param {string} name
   *  @param {(original: Function, self: any, args: any[]) => unknown} apply `self`, `args`: the page's own, any values. */
  function wrapOn(owner, name, apply) {
    const original = owner && owner[name];
    if (typeof original !== "function") return;
    owner[name] = new Proxy(original, {
      apply: (target, self, args) => apply(target, self, args),
    });
  }

  /** `wrapOn(window, …)`.
   *  @param {string} name
   *  @param {(original: Function, self: any, args: any[]) => unknown} apply */
  function wrap(name, apply) {
    wrapOn(window, name, apply);
  }

  wrap("setTimeout", (original, self, args) => {
    const [callback, delay] = args;
    const level = depth + 1;
    if (typeof callback !== "function" || !((Number(delay) || 0) <= SHORT_MS) || level > DEPTH) {
      return Reflect.apply(original, self, args);
    }
    let id = 0;
    const run = tracked(callback, level, () => timers.delete(id));
    id = Reflect.apply(original, self, [run, ...args.slice(1)]);
    timers.add(id);
    return id;
  });
  for (const name of ["clearTimeout", "clearInterval"]) {
    wrap(name, (original, self, args) => {
      timers.delete(args[0]);
      return Reflect.apply(original, self, args);
    });
  }
  wrap("requestAnimationFrame", (original, self, args) => {
    const [callback] = args;
    const level = depth + 1;
    // A hidden document gets no frames until it is shown: nothing to wait for.
    if (typeof callback !== "function" || level > DEPTH || document.visibilityState !== "visible") {
      return Reflect.apply(original, self, args);
    }
    let id = 0;
    const run = tracked(callback, level, () => frames.delete(id));
    id = Reflect.apply(original, self, [run]);
    frames.add(id);
    return id;
  });
  wrap("cancelAnimationFrame", (original, self, args) => {
    frames.delete(args[0]);
    return Reflect.apply(original, self, args);
  });
  // Idle callbacks: a page that works in slices yields between them this way (rustdoc's search
  // loads its index shard by shard).
  wrap("requestIdleCallback", (original, self, args) => {
    const [callback] = args;
    const level = depth + 1;
    if (typeof callback !== "function" || level > DEPTH) return Reflect.apply(original, self, args);
    let id = 0;
    const run = tracked(callback, level, () => idle.delete(id));
    id = Reflect.apply(original, self, [run, ...args.slice(1)]);
    idle.add(id);
    return id;
  });
  wrap("cancelIdleCallback", (original, self, args) => {
    idle.delete(args[0]);
    return Reflect.apply(original, self, args);
  });

  // Answers: counted until a task after they settle. The task comes from a channel of this
  // script's own, which the page cannot see and which no timer count includes.
  let answers = 0;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    answers = Math.max(0, answers - 1);
  };
  /** Ends one answer's count a task from now, once its handlers have run. */
  function answered() {
    channel.port2.postMessage(null);
  }
  /** Counts `result` as an answer if it is a promise, and returns the promise the page gets:
   *  the same outcome, settled one microtask later, so that a rejection the page leaves
   *  unhandled is still reported as the page's own.
   *  @param {unknown} result */
  function awaited(result) {
    if (!(result instanceof Promise)) return result;
    answers += 1;
    return result.then(
      (value) => {
        answered();
        return value;
      },
      (error) => {
        answered();
        throw error;
      },
    );
  }
  wrap("fetch", (original, self, args) => awaited(Reflect.apply(original, self, args)));
  if (typeof Response === "function") {
    for (const name of ["arrayBuffer", "blob", "bytes", "formData", "json", "text"]) {
      wrapOn(Response.prototype, name, (original, self, args) =>
        awaited(Reflect.apply(original, self, args)),
      );
    }
  }
  if (typeof XMLHttpRequest === "function") {
    // Counted from `send` to `loadend` (which follows `load`, `error`, `abort` or `timeout`).
    wrapOn(XMLHttpRequest.prototype, "send", (original, self, args) => {
      if (!(self instanceof XMLHttpRequest)) return Reflect.apply(original, self, args);
      answers += 1;
      let open = true;
      const end = () => {
        if (open) answered();
        open = false;
      };
      self.addEventListener("loadend", end, { once: true });
      try {
        return Reflect.apply(original, self, args);
      } catch (error) {
        self.removeEventListener("loadend", end);
        end();
        throw error;
      }
    });
  }

  Object.defineProperty(window, KEY, {
    value: () => ({
      pending: timers.size + frames.size + idle.size + answers,
      sinceMs: lastRan < 0 ? -1 : performance.now() - lastRan,
    }),
  });
})();
