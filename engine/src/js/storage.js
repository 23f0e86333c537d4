// @ts-check
// storage: reads or seeds the document's localStorage and sessionStorage for saved state
// (browser_state, docs/mcp.md#saved-state). Not an installer module: it runs on its own, through
// Runtime.callFunctionOn in chromate's world (read, seed now) or as a new-document script in
// that world (seed before the page's own scripts run), so it takes its argument directly.
// Isolated worlds share the document's storage, so the page never sees these calls.
// The argument comes as JSON text: an object passed by value, or written as an object literal,
// would lose a page's key named `__proto__` (the protocol and the literal both set the
// prototype instead); `JSON.parse` keeps it as a key of its own.
/** @type {(text: string) => object} */
(function (text) {
  "use strict";
  /** @type {{op: string, origin?: string, local?: Record<string, unknown>, session?: Record<string, unknown>}} */
  const a = JSON.parse(text);
  /** Every key and value of `area` (a Storage), `{}` when the document may not use it. The
   *  object has no prototype, so a key such as `__proto__` is kept as a key of its own.
   *  @param {() => Storage} area */
  function entries(area) {
    /** @type {Record<string, string | null>} */
    const res = Object.create(null);
    try {
      const store = area();
      for (let i = 0; i < store.length; i++) {
        const key = store.key(i);
        if (key !== null) res[key] = store.getItem(key);
      }
    } catch (e) {
      // Opaque origins (about:blank, data:) and disabled storage throw: nothing to read.
    }
    return res;
  }
  /** Sets every `[key, value]` of `items` in `area`; quota or security errors end it quietly.
   *  @param {() => Storage} area
   *  @param {Record<string, unknown> | undefined} items */
  function fill(area, items) {
    try {
      const store = area();
      for (const key of Object.keys(items || {})) store.setItem(key, String(items[key]));
    } catch (e) {
      return false;
    }
    return true;
  }
  const local = function () { return globalThis.localStorage; };
  const session = function () { return globalThis.sessionStorage; };
  const origin = globalThis.location && globalThis.location.origin !== "null" ? globalThis.location.origin : null;
  /** `{op:"read"}` → `{origin, local:{k:v}, session:{k:v}}` (origin null when opaque).
   *  `{op:"seed", origin, local, session}` → `{seeded}`: seeds only a document of that origin. */
  if (a.op === "read") {
    return { origin: origin, local: origin ? entries(local) : {}, session: origin ? entries(session) : {} };
  }
  if (a.op === "seed") {
    if (origin === null || origin !== a.origin) return { seeded: false };
    const ok = fill(local, a.local) && fill(session, a.session);
    return { seeded: ok };
  }
  return { error: "unknown op" };
})
