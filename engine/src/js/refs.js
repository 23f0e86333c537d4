// @ts-check
// refs: the ref table of this document, held only in the isolated world (docs/mcp.md#refs). Numbers come
// from the session-wide counter that Rust owns: every minting call takes `nextRef` and hands
// back the advanced counter.
/** @type {(C: Chromate) => ChromateRefs} */
(function (C) {
  "use strict";

  /** n → {el: WeakRef<Element>, doc: WeakRef<Document>} (the document at minting time).
   *  @type {Map<number, {el: WeakRef<Element>, doc: WeakRef<Document>}>} */
  const byNumber = new Map();
  /** Element → n. @type {WeakMap<Element, number>} */
  const byElement = new WeakMap();

  /** `assign(el, nextRef)` → `{ref, nextRef}`: `el`'s existing ref, else `nextRef` newly minted
   *  (then `nextRef` advances by one).
   *  @param {Element} el
   *  @param {number} nextRef */
  function assign(el, nextRef) {
    const old = byElement.get(el);
    if (old !== undefined) return { ref: old, nextRef };
    byElement.set(el, nextRef);
    byNumber.set(nextRef, { el: new WeakRef(el), doc: new WeakRef(el.ownerDocument) });
    return { ref: nextRef, nextRef: nextRef + 1 };
  }

  /** The ref `el` already has in this world, or null. Never mints.
   *  @param {Element} el */
  function refOf(el) {
    const n = byElement.get(el);
    return n === undefined ? null : n;
  }

  /** `lookup(n)` → `{status:"ok", element}` | `{status:"detached"}` (collected or disconnected)
   *  | `{status:"ambiguous"}` (now in another document) | `{status:"unknown"}` (never minted
   *  here).
   *  @param {number} n
   *  @returns {RefLookup} */
  function lookup(n) {
    const entry = byNumber.get(n);
    if (!entry) return { status: "unknown" };
    const el = entry.el.deref();
    const doc = entry.doc.deref();
    if (!el) return { status: "detached" };
    if (el.ownerDocument !== doc) return { status: "ambiguous" };
    if (!el.isConnected) return { status: "detached" };
    return { status: "ok", element: el };
  }

  /** `status(n)` → `"ok"|"detached"|"ambiguous"|"unknown"`: `lookup` without the element, for
   *  `returnByValue` callers.
   *  @param {number} n */
  function status(n) {
    return lookup(n).status;
  }

  /** `parse("e12")` → 12, or null unless the text is `e<N>`/`E<N>` with N ≥ 1.
   *  @param {string} s */
  function parse(s) {
    const m = /^[eE]([1-9][0-9]*)$/.exec(s);
    return m ? Number(m[1]) : null;
  }

  return { assign, refOf, lookup, status, parse };
})
