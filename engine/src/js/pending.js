// @ts-check
// pending: the work a page has scheduled for the next moments, for the wait after `load`
// (docs/mcp.md#observations). The one script chromate runs in a page's main world from the start
// of every document, since timers and animation frames live there and chromate's isolated world
// cannot see them: `setTimeout`, `requestAnimationFrame`, `requestIdleCallback` and their
// cancels are wrapped in proxies of the originals (so `toString`, `name` and `length` read as
// the browser's own), and a non-enumerable `Symbol.for("chromate.pending")` on `window`
// answers `{pending, sinceMs}`: the timers of at most SHORT_MS, the animation frames and the
// idle callbacks not yet run, and the milliseconds since such a callback last ran (-1: none).
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

  /** Replaces `window[name]` with a proxy whose `apply` is `apply(original, self, args)`.
   *  @param {string} name
   *  @param {(original: Function, self: unknown, args: any[]) => unknown} apply `args`: the page's own arguments, any values. */
  function wrap(name, apply) {
    // `window` as `any`: its property is read and written by a name given at run time.
    const original = /** @type {any} */ (window)[name];
    if (typeof original !== "function") return;
    (/** @type {any} */ (window))[name] = new Proxy(original, {
      apply: (target, self, args) => apply(target, self, args),
    });
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

  Object.defineProperty(window, KEY, {
    value: () => ({
      pending: timers.size + frames.size + idle.size,
      sinceMs: lastRan < 0 ? -1 : performance.now() - lastRan,
    }),
  });
})();
