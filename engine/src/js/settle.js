// settle: DOM mutations of this document since chromate started watching, for the quiet period
// after `load` (the navigate wait). Rust pairs them with the network activity it tracks itself.
(function (C) {
  "use strict";

  let observer = null;
  let last = 0;
  let count = 0;

  /** `watch()` → `{count, sinceMs}`: watches this document's mutations (elements added or
   *  removed, attributes, text, anywhere below the document; shadow trees not) and reports how
   *  many were seen and the milliseconds since the last one (or since watching began). The
   *  installer starts it as the document is created, so the parser's insertions count too. */
  function watch() {
    if (!observer) {
      last = performance.now();
      observer = new MutationObserver((records) => {
        count += records.length;
        last = performance.now();
      });
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    return { count, sinceMs: performance.now() - last };
  }

  watch();

  return { watch };
})
