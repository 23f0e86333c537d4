// @ts-check
// snapshot: the snapshot walk (docs/mcp.md#snapshots). Returns structured line records; Rust renders them (docs/mcp.md#snapshots) and splices
// in the lines of cross-origin frames, which it walks itself in their own isolated worlds.
/** @typedef {{at: number, depth: number, reserved: boolean, inserted: boolean}} ShadowEntry A shadow tree being walked: where its marker line goes (`at`, `depth`), whether the semantic budget keeps it a place, whether it is in. */
/** @typedef {{cur: Element | null, arr: Element[] | null, i: number, depth: number, shadow?: ShadowEntry}} WalkFrame The walk stack's frame: a sibling chain (`cur`) or an array (`arr` from `i`). */
/** @typedef {{iframe: Element, line: SnapshotLine}} WalkPause Where the walk paused: a cross-origin iframe and its line. */
/**
 * @typedef {object} WalkState One walk, kept between pieces (`paused`).
 * @property {SnapshotLine[]} lines
 * @property {number} nextRef
 * @property {SnapshotBudgets} left
 * @property {number} maxOptions
 * @property {boolean} truncated
 * @property {boolean} more
 * @property {number | undefined} cutRef
 * @property {number} lastRef
 * @property {boolean} skipping
 * @property {Element | null} afterEl
 * @property {Element | null} root
 * @property {Map<Document, Element[]>} frames
 * @property {ShadowEntry[]} pending
 * @property {WalkFrame[]} stack
 * @property {number} sent
 */
/** @type {(C: Chromate) => ChromateSnapshot} */
(function (C) {
  "use strict";
  const D = C.dom;

  const SEMANTIC_TAGS = new Set(["a", "button", "select", "textarea", "summary", "h1", "h2", "h3", "h4",
    "h5", "h6", "img", "label", "iframe", "nav", "main", "header", "footer", "form", "dialog"]);
  const EVIDENCE_TAGS = new Set(["output", "caption", "figcaption"]);
  const EVIDENCE_ROLES = new Set(["status", "alert", "log"]);
  const TEXT_TAGS = new Set(["p", "dt", "dd"]);
  const NO_VALUE_TYPES = new Set(["password", "hidden", "file", "checkbox", "radio", "submit", "button",
    "reset", "image"]);
  const SECRET_AUTOCOMPLETE = new Set(["one-time-code", "current-password", "new-password"]);
  const SECRET_WORD = new RegExp("(?:^|[^a-z0-9])(?:password|passcode|otp|one[ _-]?time|token|secret|" +
    "api[ _-]?key|access[ _-]?key|credit[ _-]?card|cc[ _-]?number|cc[ _-]?no|card[ _-]?number|" +
    "card[ _-]?no|cvv|cvc|security[ _-]?code)(?=$|[^a-z0-9])");
  const TRISTATE = new Set(["true", "false", "mixed"]);
  const MAX_TEXT = 120;

  /** Whether `s` (camelCase split, lower-cased) holds a secret term (docs/mcp.md#secrets) as a whole word.
   *  @param {string | null | undefined} s */
  function isSecretWord(s) {
    return !!s && SECRET_WORD.test(D.words(s));
  }

  /** Whether the value of field `el` (with accessible name `name`) is secret per docs/mcp.md#secrets.
   *  @param {Element} el
   *  @param {string} [name] */
  function isSecretField(el, name) {
    if (el.localName === "input" && NO_VALUE_TYPES.has(/** @type {HTMLInputElement} */ (el).type)) return true;
    const ac = el.getAttribute("autocomplete");
    if (ac) {
      for (const t of ac.toLowerCase().split(/\s+/)) {
        if (SECRET_AUTOCOMPLETE.has(t) || t.startsWith("cc-")) return true;
      }
    }
    for (const a of ["id", "name", "placeholder", "aria-label"]) if (isSecretWord(el.getAttribute(a))) return true;
    return isSecretWord(name);
  }

  /** The printable value of `el` (docs/mcp.md#secrets): select/textarea/input/editing host, secrets omitted.
   *  @param {Element} el
   *  @param {string} name
   *  @param {boolean} editingHost */
  function valueOf(el, name, editingHost) {
    const tag = el.localName;
    let v;
    if (tag === "select") {
      const o = /** @type {HTMLSelectElement} */ (el).selectedOptions && /** @type {HTMLSelectElement} */ (el).selectedOptions[0];
      v = o ? o.value : "";
    } else if (tag === "textarea" || tag === "input") v = /** @type {HTMLInputElement} */ (el).value;
    else if (editingHost) v = D.normalize(/** @type {HTMLElement} */ (el).innerText);
    else return undefined;
    if (!v || isSecretField(el, name)) return undefined;
    return D.cut(v, 80);
  }

  /** Destination of a link (docs/mcp.md#snapshots), as short as it reads unambiguously against the document that
   *  holds it: another origin → absolute; in the top document, the same document → `#fragment`
   *  (`?query` when only the query differs), a page under the document's directory → relative to
   *  that directory (`ch02.html`, `api/x.html`); else path+query+fragment; cut at 80.
   *  @param {Element} el */
  function hrefOf(el) {
    if (!el.hasAttribute("href")) return undefined;
    // An SVG `<a>`'s `href` is no string.
    const abs = /** @type {HTMLAnchorElement} */ (el).href;
    if (typeof abs !== "string" || !abs) return undefined;
    // `href` is already absolute and serialised, so a same-origin URL is the origin followed by
    // "/" (path), "?" or "#"; no URL parsing needed.
    const doc = el.ownerDocument;
    const origin = doc.location.origin;
    let s = abs;
    if (origin !== "null" && abs.startsWith(origin)) {
      const c = abs.charAt(origin.length);
      if (c === "/" || c === "?" || c === "#") s = abs.slice(origin.length);
      else if (c === "") s = "/";
      if (s !== abs && isTopDocument(doc)) s = relativeTo(s, doc.location);
    }
    return D.cut(s, 80);
  }

  /** Whether `doc` is the top document of its tab: its relative hrefs read against the URL of
   *  the snapshot's header (an iframe's lines keep their frame's path+query+fragment).
   *  @param {Document} doc */
  function isTopDocument(doc) {
    const w = doc.defaultView;
    try { return !!w && w === w.top; } catch (e) { return false; }
  }

  /** `target` (a same-origin path+query+fragment) as a relative reference against `loc`, when
   *  shorter: `#f` for the same document, `?q…` for the same path, the rest of the path under
   *  the document's directory (`./` first where the rest would not read as a path).
   *  @param {string} target
   *  @param {Location} loc */
  function relativeTo(target, loc) {
    const hash = target.indexOf("#");
    const pathQuery = hash < 0 ? target : target.slice(0, hash);
    const fragment = hash < 0 ? "" : target.slice(hash);
    const q = pathQuery.indexOf("?");
    const path = q < 0 ? pathQuery : pathQuery.slice(0, q);
    const query = q < 0 ? "" : pathQuery.slice(q);
    if (path === loc.pathname) {
      if (query === loc.search && fragment) return fragment;
      if (query && query !== loc.search) return query + fragment;
    }
    const dir = loc.pathname.slice(0, loc.pathname.lastIndexOf("/") + 1);
    if (dir.length <= 1 || !target.startsWith(dir)) return target;
    const rest = target.slice(dir.length);
    if (rest === "") return "./";
    // `?q` or `#f` alone would stay on this document; `a:b` would read as a scheme.
    const first = rest.split(/[/?#]/, 1)[0];
    if (rest[0] === "?" || rest[0] === "#" || first.includes(":")) return "./" + rest;
    return rest;
  }

  /** Hint (docs/mcp.md#snapshots): `#id`, else `[data-testid="v"]`/`[data-test-id="v"]`, else `tag[name="v"]`.
   *  @param {Element} el */
  function hintOf(el) {
    const id = el.getAttribute("id");
    if (id) return D.cut("#" + id, 80);
    let v = el.getAttribute("data-testid");
    if (v) return D.cut('[data-testid="' + v + '"]', 80);
    v = el.getAttribute("data-test-id");
    if (v) return D.cut('[data-test-id="' + v + '"]', 80);
    v = el.getAttribute("name");
    if (v) return D.cut(el.localName + '[name="' + v + '"]', 80);
    return undefined;
  }

  /** The snapshot class of `el` (docs/mcp.md#snapshots): "evidence", "semantic", "text" or null; `r` its role.
   *  @param {Element} el
   *  @param {string} tag
   *  @param {string | null} r
   *  @returns {SnapshotClass | null} */
  function classify(el, tag, r) {
    if (EVIDENCE_TAGS.has(tag) || D.isLive(el) || EVIDENCE_ROLES.has(r)) return "evidence";
    if ((TEXT_TAGS.has(tag) || ((tag === "div" || tag === "span") && el.firstElementChild === null)) &&
      D.hasEvidenceId(el)) return "evidence";
    if (SEMANTIC_TAGS.has(tag) || el.shadowRoot) return "semantic";
    if (el.hasAttribute("role") && el.getAttribute("role").trim()) return "semantic";
    // A named section has the role region (docs/mcp.md#snapshots), a container (docs/mcp.md#snapshots), as an explicit
    // role="region" has; an unnamed one is generic and not listed.
    if (tag === "section" && r === "region") return "semantic";
    if (tag === "input") return /** @type {HTMLInputElement} */ (el).type === "hidden" ? null : "semantic";
    if (el.hasAttribute("contenteditable") && D.isEditingHost(el)) return "semantic";
    if (TEXT_TAGS.has(tag) || tag === "pre") return "text";
    if (tag === "tr" && !inLayoutTable(el)) return "text";
    return null;
  }

  /** Whether table row `tr` belongs to a table made presentational (`role="none"` or
   *  `"presentation"`: a layout table), whose rows are no rows.
   *  @param {Element} tr */
  function inLayoutTable(tr) {
    const table = tr.closest("table");
    const r = table && D.explicitRole(table);
    return r === "none" || r === "presentation";
  }

  /** How many cells a row line shows (docs/mcp.md#snapshots). */
  const MAX_CELLS = 8;
  /** How many lines of a `<pre>` block its line shows. */
  const MAX_PRE_LINES = 3;

  /** The text of a text-class line for `el` (not cut): a table row's cells joined by ` | `
   *  (the first `MAX_CELLS`, each cut at 40, empty ones at the end left out, `…` for the
   *  rest), a `<pre>` block's first
   *  `MAX_PRE_LINES` non-blank lines (whitespace runs in each made one space) joined by a
   *  newline, else the element's visible text, normalised.
   *  @param {Element} el
   *  @param {string} tag */
  function lineText(el, tag) {
    if (tag === "tr") {
      const cells = [];
      let more = false;
      for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName !== "td" && c.localName !== "th") continue;
        if (D.attrHidden(c) || !c.checkVisibility({ visibilityProperty: true })) continue;
        if (cells.length >= MAX_CELLS) { more = true; break; }
        cells.push(D.cut(D.normalize(D.visibleText(c, false)), 40));
      }
      while (cells.length && !cells[cells.length - 1]) cells.pop();
      if (!cells.length) return "";
      if (more) cells.push("\u2026");
      return cells.join(" | ");
    }
    if (tag === "pre") {
      const lines = [];
      for (const l of D.visibleText(el, false).split("\n")) {
        const t = D.normalize(l);
        if (!t) continue;
        if (lines.length >= MAX_PRE_LINES) { lines.push("\u2026"); break; }
        lines.push(t);
      }
      return lines.join("\n");
    }
    return D.normalize(D.visibleText(el, false));
  }

  /** Whether a text line of `tag` with text `t` is too long to list (ordinary text over
   *  `MAX_TEXT`: prose is read with browser_read; rows and code blocks are cut instead).
   *  @param {string} tag
   *  @param {string} t */
  function tooLong(tag, t) {
    return t.length > MAX_TEXT && tag !== "tr" && tag !== "pre";
  }

  /** Index of `iframe` among the iframes of its document (light DOM and open shadow roots, tree
   *  order); the same order `frameOwner` uses.
   *  @param {Element} iframe
   *  @param {Map<Document, Element[]>} cache */
  function iframeIndex(iframe, cache) {
    const doc = iframe.ownerDocument;
    let list = cache.get(doc);
    if (!list) { list = allIframes(doc); cache.set(doc, list); }
    return list.indexOf(iframe);
  }

  /** @param {Document} doc */
  function allIframes(doc) {
    /** @type {Element[]} */
    const out = [];
    (function scan(/** @type {Document | ShadowRoot} */ root) {
      const list = root.querySelectorAll("*");
      for (let i = 0; i < list.length; i++) {
        const el = list[i];
        if (el.localName === "iframe") out.push(el);
        if (el.shadowRoot) scan(el.shadowRoot);
      }
    })(doc);
    return out;
  }

  /** `frameOwner(index)` → the `index`-th iframe element of this document (as `frame.index` in
   *  snapshot lines), or null. Call with `returnByValue:false` and `DOM.describeNode` the result
   *  to learn its `frameId`.
   *  @param {number} index */
  function frameOwner(index) {
    return allIframes(document)[index] || null;
  }

  /** `take({nextRef, budgets:{semantic, evidence, text, unlisted?}, scopeRef?, scopeSelector?, after?})` →
   *  `{lines:[{depth, ref?, role, container?, name?, level?, href?, value?, hint?, disabled?,
   *  checked?:true|"mixed", selected?, options?, expanded?, pressed?, current?, kind:"semantic"|"evidence"|
   *  "text"|"shadow"|"iframe", frame?:{index}, unlisted?:true}], nextRef, budgets:{semantic,
   *  evidence, text, unlisted}, (`unlisted` lines: text-class lines beyond the text budget, up to
   *  `budgets.unlisted` of them, with no ref, which the view does not show and diffs compare)
   *  truncated, more, skipping, title, url, ms, paused?:{token, frame:{index}, depth}}` | `{ok:false,
   *  error:"invalid selector"|"stale-ref"|"no-match", …}`. Same-origin iframes are walked in
   *  place. At a cross-origin iframe the walk pauses right after the iframe line (marked
   *  `frame:{index}`) and returns `paused`: Rust finds the frame (`pausedFrame(token)`), walks it
   *  in its own isolated world with the returned `nextRef`/`budgets`, adds `paused.depth` to each
   *  of its lines' `depth`, appends them, and calls `resume` with what is left; the pieces
   *  concatenate in document order. `depth` counts indentation levels (two spaces each).
   *  `more`: the semantic budget left elements out, `cutRef` (in the piece where that happened)
   *  the last ref listed before (pass `lastRef`, the last ref listed so far, to `take` for a
   *  frame and to `resume`). `after` (a ref number) pages: nothing is
   *  listed up to and including that element (its subtree is then walked), depths stay those of
   *  the whole snapshot; `skipping` says the element was not reached yet (it may be in a later
   *  frame: pass `after` on to the frames walked while skipping, `skipping` to `resume`).
   *  @param {SnapshotTakeArgs} args */
  function take(args) {
    return D.withCache(() => takeUncached(args));
  }

  /** @param {SnapshotTakeArgs} args
   *  @returns {SnapshotPiece | ResolvedSelector | {ok: false, error: string, canonical: string}} */
  function takeUncached(args) {
    const t0 = performance.now();
    args = args || {};
    const b = args.budgets || {};
    /** @type {WalkState} */
    const st = {
      lines: [],
      nextRef: args.nextRef || 1,
      left: { semantic: num(b.semantic, 80), evidence: num(b.evidence, 10), text: num(b.text, 7), unlisted: num(b.unlisted, 0) },
      maxOptions: num(args.maxOptions, MAX_OPTIONS),
      truncated: false,
      more: false,
      cutRef: undefined,
      lastRef: num(args.lastRef, 0),
      skipping: args.after != null,
      afterEl: null,
      root: null,
      frames: new Map(),
      pending: [],
      stack: [],
      sent: 0,
    };
    if (st.skipping) {
      const found = C.refs.lookup(args.after);
      st.afterEl = found.status === "ok" ? found.element : null;
    }
    if (args.scopeRef != null || args.scopeSelector != null) {
      const sel = args.scopeRef != null ? "ref=e" + args.scopeRef : args.scopeSelector;
      const r = C.selector.resolve(sel);
      if (!r.ok) return r;
      if (!r.elements.length) return { ok: false, error: "no-match", canonical: r.canonical };
      const root = r.elements[0];
      st.root = root;
      if (!D.underHidden(root)) st.stack.push({ cur: null, arr: [root], i: 0, depth: 0 });
    } else if (document.documentElement) {
      push(st, document.documentElement, 0);
    }
    return step(st, t0);
  }

  /** `takeJson(args)` → `JSON.stringify(take(args))`. The protocol carries a string as is,
   *  while an object returned by value is converted property by property by the inspector,
   *  which costs more than the walk itself on a 100-line snapshot; Rust uses these.
   *  @param {SnapshotTakeArgs} args */
  function takeJson(args) {
    return JSON.stringify(take(args));
  }

  /** `resumeJson(args)` → `JSON.stringify(resume(args))`, as `takeJson`.
   *  @param {SnapshotResumeArgs} args */
  function resumeJson(args) {
    return JSON.stringify(resume(args));
  }

  /** Paused walks, by token (one per pending cross-origin frame). */
  /** @type {Map<number, {st: WalkState, iframe: Element}>} */
  const paused = new Map();
  let lastToken = 0;

  /** Runs the walk until it ends or pauses at a cross-origin frame; returns the lines since the
   *  last piece.
   *  @param {WalkState} st
   *  @param {number} t0
   *  @returns {SnapshotPiece} */
  function step(st, t0) {
    const pause = run(st);
    /** @type {SnapshotPiece} */
    const res = {
      lines: st.sent ? st.lines.slice(st.sent) : st.lines, nextRef: st.nextRef, budgets: st.left, truncated: st.truncated,
      more: st.more, cutRef: st.cutRef, skipping: st.skipping, title: document.title, url: document.URL, ms: performance.now() - t0,
    };
    if (pause) {
      const token = ++lastToken;
      paused.set(token, { st, iframe: pause.iframe });
      // Rust resumes or cancels at once; an abandoned walk must not pin a document forever.
      if (paused.size > 8) paused.delete(paused.keys().next().value);
      res.paused = { token, frame: pause.line.frame, depth: pause.line.depth + 1 };
    }
    st.sent = st.lines.length;
    return res;
  }

  /** `resume({token, nextRef, budgets, truncated?, more?, skipping?, lastRef?})` → the next piece of a walk that paused at a
   *  cross-origin frame (`take` result shape, possibly with `paused` again) | `{ok:false,
   *  error:"unknown-token"}`. Pass the counter and budgets left after walking that frame.
   *  @param {SnapshotResumeArgs} args */
  function resume(args) {
    return D.withCache(() => resumeUncached(args));
  }

  /** @param {SnapshotResumeArgs} args
   *  @returns {SnapshotPiece | {ok: false, error: string}} */
  function resumeUncached(args) {
    const t0 = performance.now();
    const p = paused.get(args.token);
    if (!p) return { ok: false, error: "unknown-token" };
    paused.delete(args.token);
    const b = args.budgets || {};
    const st = p.st;
    st.nextRef = args.nextRef;
    st.left = { semantic: num(b.semantic, 0), evidence: num(b.evidence, 0), text: num(b.text, 0), unlisted: num(b.unlisted, 0) };
    if (args.truncated) st.truncated = true;
    if (args.more) st.more = true;
    st.lastRef = num(args.lastRef, st.lastRef);
    st.cutRef = undefined;
    st.skipping = !!args.skipping && st.skipping;
    return step(st, t0);
  }

  /** `pausedFrame(token)` → the iframe element a paused walk waits on, or null. Call with
   *  `returnByValue:false` and `DOM.describeNode` the result: its `frameId` names the frame (and,
   *  for an out-of-process frame, the target) to walk.
   *  @param {number} token */
  function pausedFrame(token) {
    const p = paused.get(token);
    return p ? p.iframe : null;
  }

  /** `cancel({token})` → `{ok:true}`: drops a paused walk (e.g. the frame could not be walked
   *  and Rust gives up on this snapshot).
   *  @param {{token: number}} args */
  function cancel(args) {
    paused.delete(args.token);
    return { ok: true };
  }

  /** Notes that the semantic budget left an element out, and the last ref listed before it
   *  (`cutRef`, 0 if none yet): where the next page starts (`after`). Lines listed after this
   *  point (evidence and text keep budgets of their own) show on that page again.
   *  @param {WalkState} st */
  function markMore(st) {
    if (st.more) return;
    st.more = true;
    st.cutRef = st.lastRef;
  }

  /** @param {unknown} v
   *  @param {number} d
   *  @returns {number} */
  function num(v, d) {
    return typeof v === "number" && v >= 0 ? v : d;
  }

  /** Whether every budget is spent; once also something was left out (a semantic element among
   *  it, so that `more` is known) the walk can stop.
   *  @param {WalkState} st */
  function done(st) {
    return st.truncated && st.more && st.left.semantic === 0 && st.left.evidence === 0 && st.left.text === 0 &&
      st.left.unlisted === 0;
  }

  /** Pushes the flat-tree element children of `node` as a frame of the walk stack: a sibling
   *  chain (cheap: no NodeList) or, for slots, the array of assigned elements.
   *  @param {WalkState} st
   *  @param {Element} node
   *  @param {number} depth
   *  @param {ShadowEntry} [shadow] */
  function push(st, node, depth, shadow) {
    const sr = node.shadowRoot;
    if (sr) { st.stack.push({ cur: sr.firstElementChild, arr: null, i: 0, depth, shadow }); return; }
    if (node.localName === "slot" && D.isShadowSlot(node)) {
      const arr = /** @type {Element[]} */ (/** @type {HTMLSlotElement} */ (node).assignedNodes({ flatten: true }).filter((n) => n.nodeType === 1));
      st.stack.push({ cur: null, arr, i: 0, depth, shadow });
      return;
    }
    st.stack.push({ cur: node.firstElementChild, arr: null, i: 0, depth, shadow });
  }

  /** Runs the walk (an explicit stack, so that it can pause at a cross-origin frame and resume
   *  in a later call); returns the iframe it paused at, or null when the walk is over.
   *  @param {WalkState} st
   *  @returns {WalkPause | null} */
  function run(st) {
    const stack = st.stack;
    while (stack.length) {
      const f = stack[stack.length - 1];
      let n;
      if (f.arr) n = f.i < f.arr.length ? f.arr[f.i++] : null;
      else { n = f.cur; if (n) f.cur = n.nextElementSibling; }
      if (!n || done(st)) {
        stack.pop();
        if (f.shadow) endShadow(st, f.shadow);
        continue;
      }
      const pause = visit(st, n, f.depth);
      if (pause) return pause;
    }
    return null;
  }

  /** Visits one element: lists it if it is a candidate, then pushes what to walk below it.
   *  Returns `{iframe, line}` to pause at a cross-origin frame.
   *  @param {WalkState} st
   *  @param {Element} el
   *  @param {number} depth
   *  @returns {WalkPause | null} */
  function visit(st, el, depth) {
    if (D.attrHidden(el)) return null;
    const tag = el.localName;
    if (tag === "slot" && D.isShadowSlot(el)) { push(st, el, depth); return null; }
    if (tag === "script" || tag === "style" || tag === "template" || tag === "head" || tag === "noscript") return null;
    const r = D.role(el);
    let cls = r === "none" || r === "presentation" ? null : classify(el, tag, r);
    if ((tag === "header" || tag === "footer") && r === null && !el.hasAttribute("role")) cls = null;
    if (st.skipping) return skip(st, el, tag, r, cls, depth);
    let childDepth = depth;
    let listed = false;
    if (cls && st.left[cls] === 0 && st.truncated && (cls !== "semantic" || st.more) &&
      (cls !== "text" || st.left.unlisted === 0)) {
      // This class is full and the snapshot already says so: nothing more to learn here.
    } else if (cls) {
      if (!listable(el, cls)) {
        // A display:none element hides its whole subtree: no need to walk it. Below opacity 0
        // nothing is seen, but a text field may still be typed into (`isTypeable`).
        if (D.styleOf(el).display === "none") return null;
      } else if (st.left[cls] === 0) {
        if (cls === "semantic") { st.truncated = true; markMore(st); }
        else if (cls === "text" && st.left.unlisted > 0) {
          // Beyond the text budget: kept unlisted (no ref, not rendered), so that text an
          // action makes appear shows in its diff (docs/mcp.md#observations).
          if (makeUnlisted(st, el, tag, r, depth)) st.truncated = true;
        } else if (!st.truncated) {
          const t = lineText(el, tag);
          if (t && !(cls === "text" && (tooLong(tag, t) || isOneControl(el, t)))) st.truncated = true;
        }
        if (done(st)) return null;
      } else {
        const line = makeLine(st, el, tag, r, cls, depth);
        if (line) {
          st.left[cls]--;
          listed = true;
          if (line.container) childDepth = depth + 1;
          if (tag === "iframe") return enterFrame(st, el, line, depth + 1);
        }
      }
    }
    if (el.shadowRoot) {
      // An open shadow root: a `#shadow-root (open)` marker one level below the host (reserved
      // now, kept only if the shadow tree yields a line), its content one level deeper.
      const markerDepth = listed ? depth + 1 : depth;
      const entry = { at: st.lines.length, depth: markerDepth, reserved: st.left.semantic > 0, inserted: false };
      if (entry.reserved) st.left.semantic--;
      st.pending.push(entry);
      push(st, el, markerDepth + 1, entry);
      return null;
    }
    if (tag !== "iframe") push(st, el, childDepth);
    return null;
  }

  /** Whether candidate `el` of class `cls` is seen enough to be listed: visible, or, for a
   *  semantic element, a text field that takes typing unseen (`isTypeable`) or a zero-size
   *  control a person still reaches (`isReachableZeroSize`).
   *  @param {Element} el
   *  @param {SnapshotClass} cls */
  function listable(el, cls) {
    if (D.isVisible(el)) return true;
    return cls === "semantic" && (D.isTypeable(el) || D.isReachableZeroSize(el));
  }

  /** Visits one element before the `after` element of a paged walk is reached: lists nothing,
   *  but indents below the containers and enters the frames that would be listed, so that the
   *  lines after it are those of the whole snapshot.
   *  @param {WalkState} st
   *  @param {Element} el
   *  @param {string} tag
   *  @param {string | null} r
   *  @param {SnapshotClass | null} cls
   *  @param {number} depth
   *  @returns {WalkPause | null} */
  function skip(st, el, tag, r, cls, depth) {
    if (el === st.afterEl) { st.skipping = false; st.lastRef = C.refs.refOf(el) || st.lastRef; }
    let shown = false;
    if (cls === "semantic" || (cls && el.shadowRoot)) {
      if (!listable(el, cls)) {
        if (D.styleOf(el).display === "none") return null;
      } else shown = cls === "semantic";
    }
    if (el.shadowRoot) {
      const markerDepth = shown ? depth + 1 : depth;
      const entry = { at: st.lines.length, depth: markerDepth, reserved: st.left.semantic > 0, inserted: false };
      if (entry.reserved) st.left.semantic--;
      st.pending.push(entry);
      push(st, el, markerDepth + 1, entry);
      return null;
    }
    if (tag === "iframe") {
      if (!shown) return null;
      let doc = null;
      try { doc = /** @type {HTMLIFrameElement} */ (el).contentDocument; } catch (e) { doc = null; }
      if (doc) {
        if (doc.documentElement) push(st, doc.documentElement, depth + 1);
        return null;
      }
      if (!/** @type {HTMLIFrameElement} */ (el).contentWindow) return null;
      return { iframe: el, line: { depth, frame: { index: iframeIndex(el, st.frames) } } };
    }
    push(st, el, shown && D.isContainer(el, r) ? depth + 1 : depth);
    return null;
  }

  /** @param {WalkState} st
   *  @param {ShadowEntry} entry */
  function endShadow(st, entry) {
    st.pending.pop();
    if (entry.inserted) return;
    // Unlisted text lines alone do not show the shadow tree.
    let shown = false;
    for (let i = entry.at; i < st.lines.length && !shown; i++) shown = !st.lines[i].unlisted;
    if (!shown) { if (entry.reserved) st.left.semantic++; return; }
    insertMarker(st, entry, 0);
  }

  /** @param {WalkState} st
   *  @param {ShadowEntry} entry
   *  @param {number} shift */
  function insertMarker(st, entry, shift) {
    entry.inserted = true;
    if (!entry.reserved) { st.truncated = true; markMore(st); return 0; }
    st.lines.splice(entry.at + shift, 0, { depth: entry.depth, role: "#shadow-root (open)", kind: "shadow" });
    return 1;
  }

  /** Same-origin frame: walk its document in place; cross-origin: pause the walk for Rust.
   *  @param {WalkState} st
   *  @param {Element} iframe
   *  @param {SnapshotLine} line
   *  @param {number} depth
   *  @returns {WalkPause | null} */
  function enterFrame(st, iframe, line, depth) {
    let doc = null;
    try { doc = /** @type {HTMLIFrameElement} */ (iframe).contentDocument; } catch (e) { doc = null; }
    if (doc) {
      if (doc.documentElement) push(st, doc.documentElement, depth);
      return null;
    }
    if (!/** @type {HTMLIFrameElement} */ (iframe).contentWindow) return null;
    line.frame = { index: iframeIndex(iframe, st.frames) };
    // The iframe line is itself a line of every shadow tree it sits in: their markers go out now.
    let shift = 0;
    for (const entry of st.pending) if (!entry.inserted) shift += insertMarker(st, entry, shift);
    return { iframe, line };
  }

  /** An unlisted text line (`unlisted: true`, no ref) for text-class `el` beyond the text
   *  budget, if it would have been listed; counts against `st.left.unlisted`.
   *  @param {WalkState} st
   *  @param {Element} el
   *  @param {string} tag
   *  @param {string | null} r
   *  @param {number} depth */
  function makeUnlisted(st, el, tag, r, depth) {
    const name = lineText(el, tag);
    if (!name || tooLong(tag, name) || isOneControl(el, name)) return false;
    const role = r && el.hasAttribute("role") ? r : D.isTextLike(el) ? "text" : r || tag;
    st.lines.push({ depth, role, name: D.cut(name, 80), kind: "text", unlisted: true });
    st.left.unlisted--;
    return true;
  }

  /** @param {WalkState} st
   *  @param {Element} el
   *  @param {string} tag
   *  @param {string | null} r
   *  @param {SnapshotClass} cls
   *  @param {number} depth
   *  @returns {SnapshotLine | null} */
  function makeLine(st, el, tag, r, cls, depth) {
    /** @type {SnapshotLine} */
    const line = { depth, ref: 0, role: "", kind: cls };
    let name;
    if (cls !== "semantic") {
      name = lineText(el, tag);
      if (!name) return null;
      if (cls === "text" && tooLong(tag, name)) return null;
      if (cls === "text" && isOneControl(el, name)) return null;
      line.role = r && el.hasAttribute("role") ? r : D.isTextLike(el) ? "text" : r || tag;
    } else {
      name = D.accName(el, r);
      if (tag === "label" && repeatsControl(st, el, name)) return null;
      line.role = r || tag;
      if (D.isContainer(el, r)) line.container = true;
      if (tag === "iframe") line.kind = "iframe";
    }
    const minted = C.refs.assign(el, st.nextRef);
    line.ref = minted.ref;
    st.lastRef = minted.ref;
    st.nextRef = minted.nextRef;
    if (name) line.name = D.cut(name, 80);
    if (r === "heading") {
      const lv = parseInt(el.getAttribute("aria-level"), 10);
      line.level = lv > 0 ? lv : /^h[1-6]$/.test(tag) ? Number(tag[1]) : 2;
    }
    if (tag === "a" || tag === "area") { const h = hrefOf(el); if (h !== undefined) line.href = h; }
    const editingHost = tag !== "input" && tag !== "textarea" && tag !== "select" && el.hasAttribute("contenteditable") && D.isEditingHost(el);
    const v = valueOf(el, name, editingHost);
    if (v !== undefined) line.value = v;
    if (tag === "select") { const o = optionsOf(el, isSecretField(el, name), st.maxOptions); if (o) line.options = o; }
    const hint = hintOf(el);
    if (hint !== undefined) line.hint = hint;
    flags(el, tag, line);
    st.lines.push(line);
    return line;
  }

  /** How many options of a native select a line lists (docs/mcp.md#snapshots), unless the
   *  walk's `maxOptions` says otherwise (a snapshot of more lines lists more). */
  const MAX_OPTIONS = 10;

  /** The options of native select `sel` an agent may choose (docs/mcp.md#snapshots): the
   *  labels of its first `max` options not `hidden` (optgroups flattened), each cut at
   *  40, marked `(selected)` (unless `unmarked`: a secret field's choice is not shown) and
   *  `(disabled)`, then how many more: `["Dog", "Cat" (selected), +12 more]`; undefined when it
   *  has none.
   *  @param {Element} sel
   *  @param {boolean} unmarked
   *  @param {number} max */
  function optionsOf(sel, unmarked, max) {
    const opts = /** @type {HTMLSelectElement} */ (sel).options;
    if (!opts || !opts.length) return undefined;
    const parts = [];
    let rest = 0;
    for (let i = 0; i < opts.length; i++) {
      const o = opts[i];
      if (o.hidden) continue;
      if (parts.length >= max) { rest++; continue; }
      let p = JSON.stringify(D.cut(D.normalize(o.label), 40));
      if (o.selected && !unmarked) p += " (selected)";
      if (o.disabled || (o.parentElement && o.parentElement.localName === "optgroup" && /** @type {HTMLOptGroupElement} */ (o.parentElement).disabled)) p += " (disabled)";
      parts.push(p);
    }
    if (!parts.length) return undefined;
    if (rest) parts.push("+" + rest + " more");
    return "[" + parts.join(", ") + "]";
  }

  const LISTED_CONTROLS = new Set(["input", "select", "textarea", "button"]);

  /** Whether `label` (named `name`) only repeats its control: a field or button listed in this
   *  snapshot (snapshot-visible, or typeable, and inside the scope) under that same name, whose
   *  ref does what clicking the label does. Such a label gets no line.
   *  @param {WalkState} st
   *  @param {Element} label
   *  @param {string} name */
  function repeatsControl(st, label, name) {
    const c = /** @type {HTMLLabelElement} */ (label).control;
    if (!c || !name || !LISTED_CONTROLS.has(c.localName) || D.underHidden(c)) return false;
    const r = D.role(c);
    if (r === "none" || r === "presentation") return false;
    if (st.root && !D.containsFlat(st.root, c)) return false;
    if (!D.isVisible(c) && !D.isTypeable(c)) return false;
    return D.accName(c, r) === name;
  }

  /** Whether ordinary text `el` (its text `text`) is all one link or button inside it, which
   *  is listed with that text as its name: the text line would repeat it.
   *  @param {Element} el
   *  @param {string} text */
  function isOneControl(el, text) {
    const list = el.querySelectorAll("a, button");
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      if (c.localName === "a" && !c.hasAttribute("href")) continue;
      if (D.isVisible(c) && !D.underHidden(c) && D.accName(c) === text) return true;
    }
    return false;
  }

  const FORM_CONTROLS = new Set(["button", "input", "select", "textarea", "option", "optgroup", "fieldset"]);

  /** Whether `summary` is the summary of its `details` (its first `summary` child), the
   *  disclosure button whose state is the `open` of that `details`.
   *  @param {Element} summary */
  function isDetailsSummary(summary) {
    const details = summary.parentElement;
    if (!details || details.localName !== "details") return false;
    for (let n = details.firstElementChild; n; n = n.nextElementSibling) if (n.localName === "summary") return n === summary;
    return false;
  }

  /** Sets the snapshot flags (docs/mcp.md#snapshots) on `line`.
   *  @param {Element} el
   *  @param {string} tag
   *  @param {SnapshotLine} line */
  function flags(el, tag, line) {
    if (el.hasAttribute("disabled") || el.getAttribute("aria-disabled") === "true" ||
      (FORM_CONTROLS.has(tag) && el.matches(":disabled"))) line.disabled = true;
    const ac = el.getAttribute("aria-checked");
    const input = /** @type {HTMLInputElement} */ (el);
    if ((tag === "input" && input.indeterminate && (input.type === "checkbox")) || ac === "mixed") line.checked = "mixed";
    else if ((tag === "input" && (input.type === "checkbox" || input.type === "radio") && input.checked) || ac === "true") line.checked = true;
    if ((tag === "option" && /** @type {HTMLOptionElement} */ (el).selected) || el.getAttribute("aria-selected") === "true") line.selected = true;
    const ex = el.getAttribute("aria-expanded");
    if (ex !== null && TRISTATE.has(ex.toLowerCase())) line.expanded = ex.toLowerCase();
    else if (tag === "summary" && isDetailsSummary(el)) line.expanded = /** @type {HTMLDetailsElement} */ (el.parentElement).open ? "true" : "false";
    const pr = el.getAttribute("aria-pressed");
    if (pr !== null && TRISTATE.has(pr.toLowerCase())) line.pressed = pr.toLowerCase();
    const cur = el.getAttribute("aria-current");
    if (cur !== null && cur.toLowerCase() !== "false") line.current = cur;
  }

  /** `render(result, urlOverride?)` → the snapshot text (docs/mcp.md#snapshots) of a `take` result, for tests and
   *  debugging (the engine renders in Rust; this is the reference rendering).
   *  @param {SnapshotPiece} res
   *  @param {string} [url] */
  function render(res, url) {
    const out = ["page: " + (D.cut(res.title || "", 80) || "(untitled)") + " \u2014 " + (D.cut(url || res.url || "", 200) || "(no url)")];
    const shown = res.lines.filter((l) => !l.unlisted);
    for (const l of shown) out.push(renderLine(l));
    if (!shown.length) out.push("(no interactive elements detected)");
    if (res.truncated) {
      let next = "";
      if (res.cutRef) next = "; continue with after=e" + res.cutRef;
      out.push("\u2026 (more elements not shown: snapshot limits reached" + next + ")");
    }
    return out.join("\n");
  }

  /** The snapshot text (docs/mcp.md#snapshots) of one line record (no trailing newline).
   *  @param {SnapshotLine} l */
  function renderLine(l) {
    let s = "  ".repeat(l.depth);
    if (l.kind === "shadow") return s + "#shadow-root (open)";
    s += "e" + l.ref + ": " + l.role;
    if (l.container) s += " (container)";
    if (l.name) s += " " + JSON.stringify(l.name);
    if (l.level) s += " [level=" + l.level + "]";
    if (l.href !== undefined) s += " href=" + JSON.stringify(l.href);
    if (l.value !== undefined) s += " value=" + JSON.stringify(l.value);
    if (l.options) s += " options=" + l.options;
    if (l.hint) s += " " + l.hint;
    if (l.disabled) s += " (disabled)";
    if (l.checked === "mixed") s += " (checked=mixed)";
    else if (l.checked) s += " (checked)";
    if (l.selected) s += " (selected)";
    if (l.expanded) s += " (expanded=" + l.expanded + ")";
    if (l.pressed) s += " (pressed=" + l.pressed + ")";
    if (l.current) s += " (current=" + l.current + ")";
    return s;
  }

  return { take, takeJson, resume, resumeJson, pausedFrame, cancel, render, renderLine, frameOwner, isSecretField, isSecretWord };
})
