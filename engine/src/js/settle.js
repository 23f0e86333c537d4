// @ts-check
// settle: DOM mutations of this document since chromate started watching, for the quiet period
// after `load` (the navigate wait). Rust pairs them with the network activity it tracks itself.
/** @type {(C: Chromate) => object} */
(function (C) {
  "use strict";

  /** @type {MutationObserver | null} */
  let observer = null;
  let last = 0;
  let count = 0;

  /** Whether a mutation record adds or removes an element: what a page doing work does
   *  (results inserted, a list filled). A text or attribute change alone (a ticking clock, a
   *  counter, a class toggled by a carousel) is not work an agent waits for.
   *  @param {MutationRecord} record */
  function addsOrRemovesElements(record) {
    for (const node of record.addedNodes) if (node.nodeType === 1) return true;
    for (const node of record.removedNodes) if (node.nodeType === 1) return true;
    return false;
  }

  /** `watch()` → `{count, sinceMs}`: watches this document for elements added or removed
   *  (anywhere below the document; shadow trees not) and reports how many such mutations were
   *  seen and the milliseconds since the last one (or since watching began). The installer
   *  starts it once the document is parsed (below). */
  function watch() {
    if (!observer) {
      last = performance.now();
      observer = new MutationObserver((records) => {
        const seen = records.filter(addsOrRemovesElements).length;
        if (seen > 0) {
          count += seen;
          last = performance.now();
        }
      });
      observer.observe(document, { subtree: true, childList: true });
    }
    return { count, sinceMs: performance.now() - last };
  }

  /** `turn()` → a promise of `watch()`'s answer once the page's event loop has run three more
   *  tasks (timers of this world, which the page's own timer count does not see): what a
   *  response handler does next (read the body, insert results, start the next request)
   *  happens in those tasks.
   *  @returns {Promise<{count: number, sinceMs: number}>} */
  function turn() {
    return new Promise((resolve) => {
      let left = 3;
      const next = () => {
        left -= 1;
        if (left > 0) setTimeout(next, 0);
        else resolve(watch());
      };
      setTimeout(next, 0);
    });
  }

  // From `DOMContentLoaded` on: what a page's script does from then on (a search filling its
  // results) is what the wait after `load` looks for. The parser's own insertions are not, and
  // watching them would cost the page a mutation record per node it parses (on 10,000 elements,
  // a tenth of a second before `load`; benches/README.md "The watch from DOMContentLoaded").
  // A document whose `DOMContentLoaded` never reaches this listener is watched from the wait's
  // first check, and the wait then gives it the whole grace window.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => watch(), { once: true });
  } else {
    watch();
  }

  return { watch, turn };
})
