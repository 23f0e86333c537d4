// @ts-check
// audit: the page probes of an audit (`probe.rs`). Not an installer module: a function
// expression `(C, a)` called in chromate's isolated world with the `__chromate` namespace and
// one argument, `{op: "inspect", …}`, `{op: "checkLinks", …}` or `{op: "sitemap", …}`. Every element it reports comes
// with a durable selector (`locators.durable`), never a ref. Reads the page; the layout checks
// scroll the document and the scroll containers around a control out of view to hit-test it,
// and scroll them all back.
/** @typedef {{op: "inspect", minTarget?: number}} InspectArgs */
/** @typedef {{op: "checkLinks", urls: string[], timeoutMs: number, opaque?: boolean, first?: string}} CheckLinksArgs */
/** @typedef {{op: "sitemap", url: string, timeoutMs: number, maxBytes: number}} SitemapArgs */
/** @typedef {{el: Element, x: number, y: number, w: number, h: number}} Box A control's box in document coordinates. */
/** @typedef {{status: number | null, contentType: string, finalUrl: string | null, error: string | null, opaque?: boolean}} LinkAnswer */
/** @type {(C: Chromate, a: InspectArgs | CheckLinksArgs | SitemapArgs | {op: string}) => unknown} */
(function (C, a) {
  "use strict";
  const D = C.dom;
  const L = C.locators;

  const CONTROLS = "a[href], area[href], button, input:not([type=\"hidden\"]), select, textarea, summary, " +
    "[role=\"button\"], [role=\"link\"], [role=\"checkbox\"], [role=\"radio\"], [role=\"switch\"], [role=\"tab\"], " +
    "[role=\"menuitem\"], [role=\"option\"], [role=\"slider\"], [tabindex]:not([tabindex=\"-1\"])";
  /** Roles whose element must have an accessible name. */
  const NAMED_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "option",
    "slider", "textbox", "searchbox", "combobox", "listbox", "spinbutton"]);
  const MAX_CONTROLS = 400;
  const MAX_ISSUES = 100;
  const MAX_LINKS = 500;

  /** @param {DOMRect} r */
  function rect(r) {
    return { x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY), width: Math.round(r.width), height: Math.round(r.height) };
  }

  /** Whether `outer` contains `inner` in the flat tree (shadow hosts included).
   *  @param {Node} outer
   *  @param {Node} inner */
  function contains(outer, inner) {
    for (let n = /** @type {Node | null} */ (inner); n; n = n.parentNode || /** @type {ShadowRoot} */ (n).host || null) {
      if (n === outer) return true;
    }
    return false;
  }

  /** Rendered: not `display: none` on the way up, `visibility: visible`, not transparent.
   *  @param {Element} el */
  function rendered(el) {
    return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  }

  function vitals() {
    const v = globalThis.__chromateVitals || null;
    const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType("navigation")[0]);
    const resources = /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType("resource"));
    let bytes = nav ? nav.transferSize || 0 : 0;
    const sized = [];
    for (const r of resources) {
      bytes += r.transferSize || 0;
      sized.push({ url: r.name, bytes: r.transferSize || 0 });
    }
    sized.sort((x, y) => y.bytes - x.bytes);
    const res = {
      recorded: !!v, lcp: /** @type {number | null} */ (null), lcpSelector: /** @type {string | null} */ (null),
      cls: 0, clsSelector: /** @type {string | null} */ (null), tbt: 0, longTasks: 0,
      longestTask: 0, fcp: /** @type {number | null} */ (null), requests: resources.length + (nav ? 1 : 0), bytes, largest: sized.slice(0, 3),
      hidden: document.visibilityState === "hidden",
    };
    if (!v) return res;
    // What the observers have queued and not yet been handed: the latest long task, say.
    if (typeof v.flush === "function") v.flush();
    res.hidden = res.hidden || v.hidden;
    res.lcp = v.lcp;
    res.lcpSelector = v.lcpElement && v.lcpElement.isConnected ? L.durable(v.lcpElement) : null;
    res.fcp = v.fcp;
    // CLS: the largest session window (shifts less than 1 s apart, at most 5 s long).
    let best = 0;
    let bestNode = null;
    let sum = 0;
    let first = 0;
    let last = 0;
    let node = null;
    let top = 0;
    for (const s of v.shifts) {
      if (sum && (s.time - last > 1000 || s.time - first > 5000)) {
        sum = 0;
        node = null;
        top = 0;
      }
      if (!sum) first = s.time;
      sum += s.value;
      last = s.time;
      if (s.node && s.value > top) {
        top = s.value;
        node = s.node;
      }
      if (sum > best) {
        best = sum;
        bestNode = node;
      }
    }
    res.cls = best;
    // A shifted text node is named by the element that holds it.
    const shifted = bestNode instanceof Element ? bestNode : bestNode && bestNode.parentElement;
    res.clsSelector = shifted && shifted.isConnected ? L.durable(shifted) : null;
    for (const t of v.longTasks) {
      res.tbt += Math.max(0, t.duration - 50);
      res.longestTask = Math.max(res.longestTask, t.duration);
    }
    res.longTasks = v.longTasks.length;
    return res;
  }

  function links() {
    const out = [];
    const seen = new Set();
    for (const el of document.querySelectorAll("a[href], area[href]")) {
      let u;
      try {
        u = new URL(el.getAttribute("href"), document.baseURI);
      } catch (err) {
        continue;
      }
      if (u.protocol !== "http:" && u.protocol !== "https:") continue;
      u.hash = "";
      if (seen.has(u.href)) continue;
      seen.add(u.href);
      out.push({ url: u.href, origin: u.origin, text: D.cut(D.normalize(el.textContent || ""), 80), selector: L.durable(el) });
      if (out.length >= MAX_LINKS) break;
    }
    return out;
  }

  /** Images that loaded but could not be decoded (or failed): complete with no natural size. */
  function images() {
    const out = [];
    for (const img of document.images) {
      const src = img.currentSrc || img.src;
      if (!src || img.getAttribute("src") === "" || !img.complete || img.naturalWidth > 0) continue;
      out.push({ url: src, selector: L.durable(img) });
    }
    return out;
  }

  /** Subresources an https page asks for over http. */
  function mixed() {
    if (location.protocol !== "https:") return [];
    const out = [];
    const els = document.querySelectorAll("img[src], script[src], link[rel~=\"stylesheet\"][href], iframe[src], " +
      "audio[src], video[src], source[src], embed[src], object[data]");
    for (const el of els) {
      const raw = el.getAttribute("src") || el.getAttribute("href") || el.getAttribute("data");
      let u;
      try {
        u = new URL(raw, document.baseURI);
      } catch (err) {
        continue;
      }
      if (u.protocol === "http:") out.push({ url: u.href, tag: el.localName, selector: L.durable(el) });
    }
    return out;
  }

  function overflow() {
    const root = document.documentElement;
    const viewport = root.clientWidth;
    const width = Math.max(root.scrollWidth, document.body ? document.body.scrollWidth : 0);
    const clipped = [root, document.body].some((el) => el && /hidden|clip/.test(getComputedStyle(el).overflowX));
    if (clipped || width <= viewport + 1) return { viewport, width, element: null };
    // The culprit: the widest-reaching element whose parent stays inside the viewport.
    let culprit = null;
    let reach = viewport + 1;
    for (const el of document.body ? document.body.querySelectorAll("*") : []) {
      const r = el.getBoundingClientRect();
      const right = r.right + scrollX;
      if (right <= reach || !rendered(el)) continue;
      const parent = el.parentElement;
      const parentRight = parent ? parent.getBoundingClientRect().right + scrollX : 0;
      if (parent && parent !== document.body && parentRight > viewport + 1) continue;
      reach = right;
      culprit = el;
    }
    return {
      viewport, width,
      element: culprit ? { selector: L.durable(culprit), rect: rect(culprit.getBoundingClientRect()) } : null,
    };
  }

  /** A link that sits in running text (WCAG 2.5.8's inline exception to the target size).
   *  @param {Element} el */
  function inlineInText(el) {
    if (el.localName !== "a" || getComputedStyle(el).display !== "inline") return false;
    const parent = el.parentElement;
    if (!parent) return false;
    const text = D.normalize(parent.textContent || "");
    return text.length > D.normalize(el.textContent || "").length;
  }

  /** A checkbox or radio the author left as the browser draws it (2.5.8's user-agent exception).
   *  @param {Element} el */
  function nativeToggle(el) {
    const type = el instanceof HTMLInputElement ? el.type : "";
    return el.localName === "input" && (type === "checkbox" || type === "radio") &&
      getComputedStyle(el).appearance !== "none";
  }

  /** What a click on the middle of the visible part of `el` (box `r`, viewport coordinates)
   *  lands on; `undefined` when no part of it is inside the viewport.
   *  @param {Element} el
   *  @param {DOMRect} r */
  function hitTest(el, r) {
    const x0 = Math.max(r.left, 0);
    const x1 = Math.min(r.right, innerWidth);
    const y0 = Math.max(r.top, 0);
    const y1 = Math.min(r.bottom, innerHeight);
    if (x1 <= x0 || y1 <= y0) return undefined;
    return document.elementFromPoint((x0 + x1) / 2, (y0 + y1) / 2);
  }

  /** Whether a click that lands on `hit` reaches `el`: nothing there, the control itself, its
   *  content, what contains it (a scroll container clipping it) or its label.
   *  @param {Element} el
   *  @param {Element | null} hit */
  function reaches(el, hit) {
    if (!hit || hit === el || contains(el, hit) || contains(hit, el)) return true;
    const labels = /** @type {HTMLInputElement} */ (el).labels;
    return !!labels && Array.from(labels).some((label) => contains(label, hit));
  }

  /** The layout checks of the page's controls (at most MAX_CONTROLS, MAX_ISSUES issues).
   *  @param {number} minTarget */
  function controls(minTarget) {
    /** @type {object[]} */
    const issues = [];
    const startX = scrollX;
    const startY = scrollY;
    let checked = 0;
    /** Every scroll container an element scrolled into view moved, with where it was. */
    const moved = /** @type {Map<Element, [number, number]>} */ (new Map());
    /** @param {Element} el */
    const remember = (el) => {
      for (let n = /** @type {Element} */ (D.parent(el)); n && n.nodeType === 1; n = /** @type {Element} */ (D.parent(n))) {
        if (!moved.has(n) && (n.scrollHeight > n.clientHeight || n.scrollWidth > n.clientWidth)) {
          moved.set(n, [n.scrollLeft, n.scrollTop]);
        }
      }
    };
    const restore = () => {
      for (const [n, [left, top]] of moved) n.scrollTo({ left, top, behavior: "instant" });
    };
    /** `box`: where the control was before any scrolling, in document coordinates.
     *  @param {string} kind
     *  @param {Box} box
     *  @param {object} [extra] */
    const add = (kind, box, extra) => {
      if (issues.length >= MAX_ISSUES) return;
      const el = box.el;
      const role = D.role(el) || null;
      const where = { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.w), height: Math.round(box.h) };
      const issue = { kind, selector: L.durable(el), tag: el.localName, role, name: role ? D.cut(D.accName(el, role), 80) : "", rect: where };
      issues.push(Object.assign(issue, extra || {}));
    };
    /** @type {Element[]} */
    const candidates = [];
    for (const el of document.querySelectorAll(CONTROLS)) {
      if (checked++ >= MAX_CONTROLS) break;
      if (/** @type {HTMLInputElement} */ (el).disabled || el.closest("[aria-hidden=\"true\"], [inert]") || !rendered(el)) continue;
      candidates.push(el);
    }
    // Every target's box in document coordinates, for the spacing exception.
    const boxes = candidates.map((el) => {
      const r = el.getBoundingClientRect();
      return { el, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height };
    });
    const small = (/** @type {Box} */ b) => b.w < minTarget || b.h < minTarget;
    /** WCAG 2.5.8's spacing exception: a 24 px circle on the target's centre meets no other
     *  target (nor another undersized target's circle). */
    const spaced = (/** @type {Box} */ b) => {
      const cx = b.x + b.w / 2;
      const cy = b.y + b.h / 2;
      return boxes.every((o) => {
        if (o === b || o.w === 0 || o.h === 0 || contains(o.el, b.el) || contains(b.el, o.el)) return true;
        if (small(o)) return Math.hypot(o.x + o.w / 2 - cx, o.y + o.h / 2 - cy) >= minTarget;
        const dx = Math.max(o.x - cx, 0, cx - (o.x + o.w));
        const dy = Math.max(o.y - cy, 0, cy - (o.y + o.h));
        return Math.hypot(dx, dy) >= minTarget / 2;
      });
    };
    for (const box of boxes) {
      if (issues.length >= MAX_ISSUES) break;
      const el = box.el;
      const r = el.getBoundingClientRect();
      if (box.w === 0 || box.h === 0) {
        add("zero-size", box);
        continue;
      }
      // Off-screen: outside the viewport even once the document and every scroll container
      // around the control are scrolled to it (a link far down a scrolling sidebar is not).
      let now = r;
      let hit = hitTest(el, now);
      if (hit === undefined) {
        remember(el);
        el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
        // A scroll handler of the page's may have taken the control away: nothing to judge.
        if (!el.isConnected) continue;
        now = el.getBoundingClientRect();
        hit = hitTest(el, now);
      }
      if (hit === undefined) {
        // A skip link waits off-screen until it is focused: that is its design.
        if (!(el.localName === "a" && (el.getAttribute("href") || "").startsWith("#"))) add("off-screen", box);
        continue;
      }
      const role = D.role(el);
      if (role && NAMED_ROLES.has(role) && !D.normalize(D.accName(el, role))) add("nameless", box);
      if (small(box) && !inlineInText(el) && !nativeToggle(el) && !spaced(box)) {
        add("small-target", box, { size: Math.round(r.width) + "x" + Math.round(r.height) });
      }
      // Covered: something else is on top of the control's visible middle where it is, and
      // still once it is scrolled to the middle of its scroll containers and of the viewport
      // (so a sticky header it passes under while scrolling does not count).
      if (reaches(el, hit)) continue;
      if (now === r) {
        remember(el);
        el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
        if (!el.isConnected) continue;
        now = el.getBoundingClientRect();
        hit = hitTest(el, now);
        if (hit === undefined || reaches(el, hit)) continue;
      }
      add("covered", box, { coveredBy: L.durable(hit) });
    }
    restore();
    scrollTo({ left: startX, top: startY, behavior: "instant" });
    return issues;
  }

  /** `inspect({minTarget})` → `{url, origin, vitals, links, images, mixed, overflow, controls}`
   *  (vitals first: the layout checks scroll).
   *  @param {InspectArgs} args */
  function inspect(args) {
    const res = { url: location.href, origin: location.origin, vitals: vitals(), links: links(), images: images(), mixed: mixed() };
    return Object.assign(res, { overflow: overflow(), controls: controls(args.minTarget || 24) });
  }

  /** `checkLinks({urls, timeoutMs, opaque, first})` → `{results: [{url, method, status,
   *  contentType, finalUrl, error, opaque}]}`: `first` (HEAD unless said), GET when HEAD fails
   *  or is refused (405, 501); a GET's body is not read. Four at a time, each bounded by
   *  `timeoutMs`. `opaque`: other origins' links, fetched `no-cors` without credentials and one
   *  at a time; their answers are opaque (no status: the caller reads it from the network log),
   *  so only a failure sends the GET.
   *  @param {CheckLinksArgs} args */
  async function checkLinks(args) {
    const opaque = !!args.opaque;
    /** @type {(url: string, method: string) => Promise<LinkAnswer>} */
    const attempt = async (url, method) => {
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), args.timeoutMs);
      try {
        const r = await fetch(url, opaque
          ? { method, mode: "no-cors", redirect: "follow", credentials: "omit", cache: "no-store", signal: ctl.signal }
          : { method, redirect: "follow", credentials: "same-origin", cache: "no-store", signal: ctl.signal });
        if (r.type === "opaque") return { status: null, contentType: "", finalUrl: null, error: null, opaque: true };
        return { status: r.status, contentType: r.headers.get("content-type") || "", finalUrl: r.url, error: null };
      } catch (err) {
        return { status: null, contentType: "", finalUrl: null, error: ctl.signal.aborted ? "timeout" : String((err && err.message) || err) };
      } finally {
        clearTimeout(timer);
        // A GET's body is not needed: stop it.
        if (method === "GET") ctl.abort();
      }
    };
    /** @type {object[]} */
    const results = [];
    const queue = args.urls.slice();
    const worker = async () => {
      while (queue.length) {
        const url = /** @type {string} */ (queue.shift());
        let method = args.first === "GET" ? "GET" : "HEAD";
        let r = await attempt(url, method);
        if (r.error !== null || r.status === 405 || r.status === 501) {
          method = "GET";
          r = await attempt(url, method);
        }
        results.push(Object.assign({ url, method }, r));
      }
    };
    await Promise.all(opaque ? [worker()] : [worker(), worker(), worker(), worker()]);
    return { results };
  }

  /** `sitemap({url, timeoutMs, maxBytes})` → `{kind, locs, status}`: the sitemap at `url`
   *  (same origin as the page, credentials of the origin), parsed as XML: `kind` is `urlset`
   *  or `sitemapindex` (else `error` says what it is), `locs` every `<loc>`'s text in order.
   *  A body over `maxBytes` characters is an error, not a cut list.
   *  @param {SitemapArgs} args */
  async function sitemap(args) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), args.timeoutMs);
    try {
      const r = await fetch(args.url, { credentials: "same-origin", cache: "no-store", signal: ctl.signal });
      if (!r.ok) return { error: "it answered HTTP " + r.status, status: r.status };
      const text = await r.text();
      if (text.length > args.maxBytes) return { error: "it is over " + args.maxBytes + " bytes", status: r.status };
      const doc = new DOMParser().parseFromString(text, "application/xml");
      if (doc.getElementsByTagName("parsererror").length) return { error: "it is not well-formed XML", status: r.status };
      const kind = doc.documentElement.localName;
      if (kind !== "urlset" && kind !== "sitemapindex") {
        return { error: "its root element is <" + kind + ">, not <urlset> or <sitemapindex>", status: r.status };
      }
      const locs = [];
      for (const loc of doc.getElementsByTagNameNS("*", "loc")) locs.push((loc.textContent || "").trim());
      return { kind, locs, status: r.status };
    } catch (err) {
      return { error: ctl.signal.aborted ? "timeout" : String((err && err.message) || err) };
    } finally {
      clearTimeout(timer);
    }
  }

  if (a.op === "inspect") return inspect(/** @type {InspectArgs} */ (a));
  if (a.op === "checkLinks") return checkLinks(/** @type {CheckLinksArgs} */ (a));
  if (a.op === "sitemap") return sitemap(/** @type {SitemapArgs} */ (a));
  return { error: "unknown op " + a.op };
})
