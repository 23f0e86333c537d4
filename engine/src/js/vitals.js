// @ts-check
// vitals: the Web Vitals recorder of an audited page. Registered as a new-document script in
// chromate's isolated world before the page loads, so it observes from the first paint: the
// largest contentful paint (and its element), layout shifts (grouped into CLS session windows),
// long tasks (for total blocking time) and the first contentful paint. Page scripts cannot see
// it; `audit.js` reads what it kept (`globalThis.__chromateVitals`).
(function () {
  "use strict";
  if (globalThis.__chromateVitals) return;
  /** @type {VitalsState} */
  const state = { lcp: null, lcpElement: null, shifts: [], longTasks: [], fcp: null, hidden: document.visibilityState === "hidden" };
  // A page that was hidden at any time measured less than it would have shown.
  addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") state.hidden = true;
  }, true);
  // Every observer with its handler: `flush` takes the entries queued for them but not yet
  // delivered (delivery is a task of its own, which a busy renderer may run after `audit.js`
  // reads the figures: a long task that just ended would be missing).
  /** @type {[PerformanceObserver, (entry: PerformanceEntry) => void][]} */
  const observers = [];
  /** @param {string} type
   *  @param {(entry: PerformanceEntry) => void} onEntry */
  function observe(type, onEntry) {
    try {
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) onEntry(entry);
      });
      observer.observe({ type, buffered: true });
      observers.push([observer, onEntry]);
    } catch (err) {
      // An entry type this browser does not know is simply not measured.
    }
  }
  state.flush = () => {
    for (const [observer, onEntry] of observers) {
      for (const entry of observer.takeRecords()) onEntry(entry);
    }
  };
  observe("largest-contentful-paint", /** @param {LargestContentfulPaint} entry */ (entry) => {
    state.lcp = entry.renderTime || entry.loadTime || entry.startTime;
    state.lcpElement = entry.element || null;
  });
  observe("layout-shift", /** @param {LayoutShiftEntry} entry */ (entry) => {
    if (entry.hadRecentInput) return;
    // The element that moved the most area, the page's own (not html or body) when one did.
    let source = null;
    let area = -1;
    for (const s of entry.sources || []) {
      if (!s.node || s.node.nodeType !== 1) continue;
      const r = s.previousRect;
      const own = s.node !== document.documentElement && s.node !== document.body;
      const weight = (r ? r.width * r.height : 0) + (own ? 1e9 : 0);
      if (weight > area) {
        area = weight;
        source = s;
      }
    }
    state.shifts.push({ value: entry.value, time: entry.startTime, node: source ? source.node : null });
  });
  observe("longtask", /** @param {PerformanceEntry} entry */ (entry) => {
    state.longTasks.push({ start: entry.startTime, duration: entry.duration });
  });
  observe("paint", /** @param {PerformanceEntry} entry */ (entry) => {
    if (entry.name === "first-contentful-paint") state.fcp = entry.startTime;
  });
  Object.defineProperty(globalThis, "__chromateVitals", { value: state });
})()
