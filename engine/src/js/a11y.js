// @ts-check
// a11y: runs axe-core (evaluated into this isolated world by Rust, never fetched) over the
// document or one element's subtree, and hands each reported node its ref. The elements axe
// reports are kept here between `run` and `assignRefs`, never returned to Rust.
/** @type {(C: Chromate) => object} */
(function (C) {
  "use strict";

  const IMPACTS = ["minor", "moderate", "serious", "critical"];
  /** The elements of the last `run`, by node index. @type {(Element | null)[]} */
  let kept = [];

  /** The number of the latest `run`. An audit whose call gave up (stopped past its deadline,
   *  or still going between its slices) must not touch `kept` once a later run began. */
  let latest = 0;

  /** `ready()` → whether a usable axe-core is loaded in this world. One that an audit past its
   *  deadline left marked running (a stopped script never clears axe's flag, and every later
   *  `axe.run` would throw "Axe is already running") is not: Rust then evaluates a fresh copy,
   *  which shares nothing with the abandoned run. */
  function ready() {
    const axe = globalThis.axe;
    return typeof axe === "object" && axe !== null && typeof axe.run === "function" && axe._running !== true;
  }

  /** Axe's target path as text: shadow parts joined ` >>> `, frames by ` | `.
   *  @param {(string | string[])[] | undefined} target */
  function targetText(target) {
    return (target || []).map((part) => (Array.isArray(part) ? part.join(" >>> ") : String(part))).join(" | ");
  }

  /** `run({selector?, ref?, minImpact, rules, disableRules, maxViolations, maxNodes,
   *  maxTotalNodes})` → `{ok:true, violations:[{id, impact, tags, help, description, helpUrl,
   *  nodes:[{index, target, html, failureSummary}]}], counts:{violations, passes, incomplete},
   *  truncated}` | `{ok:false, error:"axe-missing"|"unknown-rule"|"no-match"|"stale-ref"|
   *  "invalid selector", …}`. Violations below `minImpact` are dropped before counting.
   *  @param {{selector?: string, ref?: number, minImpact?: string, rules?: string[], disableRules?: string[],
   *    maxViolations: number, maxNodes: number, maxTotalNodes: number}} a */
  async function run(a) {
    if (!ready()) return { ok: false, error: "axe-missing" };
    const axe = globalThis.axe;
    const known = new Set(axe.getRules().map(/** @param {{ruleId: string}} r */ (r) => r.ruleId));
    const unknown = (a.rules || []).concat(a.disableRules || []).filter((id) => !known.has(id));
    if (unknown.length) return { ok: false, error: "unknown-rule", ids: unknown };
    /** @type {Document | Element} */
    let context = document;
    if (a.selector != null || a.ref != null) {
      const sel = a.ref != null ? "ref=e" + a.ref : a.selector;
      const r = C.selector.resolve(sel);
      if (!r.ok) return { ok: false, error: r.error, reason: r.reason, browserMessage: r.browserMessage, ref: r.ref, status: r.status };
      if (!r.elements.length) return { ok: false, error: "no-match", canonical: r.canonical };
      context = r.elements[0];
    }
    // No stylesheet fetches: axe's "cssom" preload downloads every stylesheet again and resolves
    // an @import inside an imported sheet against the page, not the sheet (`a.css` importing
    // `b.css` importing `c.css` asks the page's directory for `c.css`), so the page seemed to
    // ask for files that are not there. Only `css-orientation-lock` reads it, an experimental
    // rule axe runs only when asked by name: then it is preloaded.
    const cssom = (a.rules || []).includes("css-orientation-lock");
    /** @type {{elementRef: boolean, resultTypes: string[], iframes: boolean, preload: {assets: string[]},
     *    runOnly?: {type: string, values: string[]}, rules?: Record<string, {enabled: boolean}>}} */
    const options = {
      elementRef: true, resultTypes: ["violations"], iframes: false,
      preload: { assets: cssom ? ["cssom", "media"] : ["media"] },
    };
    if (a.rules && a.rules.length) options.runOnly = { type: "rule", values: a.rules };
    if (a.disableRules && a.disableRules.length) {
      options.rules = {};
      for (const id of a.disableRules) options.rules[id] = { enabled: false };
    }
    const mine = ++latest;
    /** @type {AxeResults} */
    const results = await axe.run(context, options);
    if (mine !== latest) return { ok: false, error: "superseded" };
    const floor = Math.max(0, IMPACTS.indexOf(a.minImpact || "minor"));
    const relevant = results.violations.filter((v) => IMPACTS.indexOf(v.impact || "minor") >= floor);
    kept = [];
    let truncated = relevant.length > a.maxViolations;
    const violations = [];
    for (const v of relevant.slice(0, a.maxViolations)) {
      const nodes = [];
      for (const n of v.nodes) {
        if (nodes.length >= a.maxNodes || kept.length >= a.maxTotalNodes) {
          truncated = true;
          break;
        }
        nodes.push({
          index: kept.length,
          target: targetText(n.target),
          html: n.html || "",
          failureSummary: n.failureSummary || "",
        });
        kept.push(n.element || null);
      }
      violations.push({
        id: v.id,
        impact: v.impact || "minor",
        tags: v.tags || [],
        help: v.help || "",
        description: v.description || "",
        helpUrl: v.helpUrl || "",
        nodes,
      });
    }
    return {
      ok: true,
      violations,
      counts: { violations: relevant.length, passes: results.passes.length, incomplete: results.incomplete.length },
      truncated,
    };
  }

  /** `assignRefs({nextRef, limit})` → `{refs: (number|null)[], selectors: (string|null)[], nextRef}`:
   *  each kept element's existing ref, else a newly minted one below `limit` (the numbers
   *  Rust reserved for this call), and its durable selector (`locators.durable`); null for
   *  elements of other documents or closed shadow roots (they cannot be resolved from this
   *  world's table) and for new ones past the limit.
   *  @param {{nextRef: number, limit: number}} a */
  function assignRefs(a) {
    let nextRef = a.nextRef;
    const refs = [];
    const selectors = [];
    for (const el of kept) {
      const root = el && el.getRootNode ? el.getRootNode() : null;
      const closed = root && root instanceof ShadowRoot && root.mode === "closed";
      const unminted = el && C.refs.refOf(el) === null && nextRef >= a.limit;
      if (!el || el.ownerDocument !== document || closed || !el.isConnected || unminted) {
        refs.push(null);
        selectors.push(null);
        continue;
      }
      const r = C.refs.assign(el, nextRef);
      nextRef = r.nextRef;
      refs.push(r.ref);
      selectors.push(C.locators.durable(el));
    }
    kept = [];
    return { refs, selectors, nextRef };
  }

  return { ready, run, assignRefs };
})
