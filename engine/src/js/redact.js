// @ts-check
// redact: whether text aimed at a field would be a secret (docs/mcp.md#secrets), so a trace can show
// "[redacted]" instead of it. Same rule as the snapshot's value suppression.
/** @type {(C: Chromate) => object} */
(function (C) {
  "use strict";

  /** `secretTarget({selector?, ref?})` → boolean: whether the first match (or, with neither,
   *  the focused element) is a field whose value snapshots suppress. Unresolvable targets
   *  count as secret, so nothing leaks when in doubt.
   *  @param {{selector?: string, ref?: number} | null} t */
  function secretTarget(t) {
    /** @type {Element | null} */
    let el = null;
    if (t && (t.selector != null || t.ref != null)) {
      const r = C.selector.resolve(t.ref != null ? "ref=e" + t.ref : t.selector);
      if (!r.ok || !r.elements.length) return true;
      el = r.elements[0];
    } else {
      el = document.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    }
    if (!el || el === document.body) return false;
    return C.snapshot.isSecretField(el, C.dom.accName(el));
  }

  return { secretTarget };
})
