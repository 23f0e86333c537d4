// The corpus test (tests/e2e/corpus.rs) awaits `window.corpusReady`, a promise each page sets:
// it resolves once the app shows what the page is about (and the page's own steps have run), and
// rejects after 20 s with what never showed.
window.corpusWhen = function (check, what) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      let ok = false;
      try {
        ok = Boolean(check());
      } catch (_) {
        ok = false;
      }
      if (ok) resolve(true);
      else if (Date.now() - started > 20000) reject(new Error("the app never showed " + what));
      else setTimeout(tick, 50);
    };
    tick();
  });
};
/** Clicks the first element `selector` matches, or throws naming it. */
window.corpusClick = function (selector, root) {
  const el = (root || document).querySelector(selector);
  if (!el) throw new Error("nothing matches " + selector);
  el.click();
};
