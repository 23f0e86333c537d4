// @ts-check
// actionability: one-call resolve → pick → state checks → scroll → action point → hit test
// (docs/mcp.md#actionability), plus the small in-page helpers the element actions and read-only tools need.
// Every function takes a target `{selector?: string, ref?: number}` (a ref wins) and answers
// `{status:"ok", …}` or a failure status:
//   {status:"invalid-selector", reason, browserMessage?} | {status:"stale-ref", ref, reason:"detached"|"ambiguous"|
//   "unknown"} | {status:"no-match"}.
/** @type {(C: Chromate) => object} */
(function (C) {
  "use strict";
  const D = C.dom;

  /** A target: `{selector?, ref?}` (a ref wins). @typedef {{selector?: string, ref?: number}} ActionTarget */
  /** `resolveTarget`'s and `pick`'s answer: status "ok" with `elements` (and from `pick`, `element` and
   *  `matched`), or a failure status with its details.
   *  @typedef {{status: string, elements?: Element[], element?: Element, matched?: number, canonical?: string,
   *    ref?: number, reason?: string, browserMessage?: string}} Picked */
  /** A rect in CSS px. @typedef {{x: number, y: number, width: number, height: number}} ActionRect */
  /** A box by its edges. @typedef {{left: number, top: number, right: number, bottom: number}} ActionBox */
  /** A text field (`input` or `textarea`). @typedef {HTMLInputElement | HTMLTextAreaElement} TextField */
  /** What `checkable` finds: an element, with an input's state when it is an `input`.
   *  @typedef {Element & Partial<Pick<HTMLInputElement, "type" | "indeterminate" | "checked">>} CheckableElement */

  /** Last rect seen per element, for the stability check, with the document time it was read
   *  at (for a read outside a frame, an upper bound of the time its layout reflects).
   *  @type {WeakMap<Element, {rect: ActionRect, time: number | null}>} */
  const lastRects = new WeakMap();
  /** Per document, the time of the last animation frame a stability check watched.
   *  @type {WeakMap<Document, number>} */
  const lastFrames = new WeakMap();
  const SET_VALUE_TYPES = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);
  const CHECK_ROLES = new Set(["checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"]);

  /** Resolves a target to `{status:"ok", elements, canonical}` or a failure status.
   *  @param {ActionTarget} t
   *  @returns {Picked} */
  function resolveTarget(t) {
    const sel = t.ref != null ? "ref=e" + t.ref : t.selector;
    const r = C.selector.resolve(sel);
    if (!r.ok) {
      if (r.error === "stale-ref") return { status: "stale-ref", ref: r.ref, reason: r.status };
      return { status: "invalid-selector", reason: r.reason, browserMessage: r.browserMessage };
    }
    if (!r.elements.length) return { status: "no-match", canonical: r.canonical };
    return { status: "ok", elements: r.elements, canonical: r.canonical };
  }

  /** `pick(target, need)` → `{status:"ok", element, matched}` | failure (`not-visible` with
   *  `matched` when none is as `need` asks). `need` is false (any match), "visible" (docs/mcp.md#actionability) or
   *  "reachable": visible, or a text field a person can type into although it is transparent or
   *  tiny (`dom.isTypeable`, a code editor's hidden textarea), or a zero-size control a person
   *  still reaches (`dom.isReachableZeroSize`: in the tab order, or with a box inside, as the
   *  snapshot lists it). The candidate is the first match that is (docs/mcp.md#selectors); for
   *  a ref, its element.
   *  @param {ActionTarget} t
   *  @param {false | "visible" | "reachable"} need
   *  @returns {Picked} */
  function pick(t, need) {
    const r = resolveTarget(t);
    if (r.status !== "ok") return r;
    const els = r.elements;
    const ok = /** @param {Element} el */ (el) => D.isVisible(el) ||
      (need === "reachable" && (D.isTypeable(el) || D.isReachableZeroSize(el)));
    if (t.ref != null || !need) {
      if (need && !ok(els[0])) return { status: "not-visible", matched: 1 };
      return { status: "ok", element: els[0], matched: els.length };
    }
    for (const el of els) if (ok(el)) return { status: "ok", element: el, matched: els.length };
    return { status: "not-visible", matched: els.length };
  }

  /** Offset of `el`'s window inside the top window (same-origin frames walked in place).
   *  @param {Element} el */
  function frameOffset(el) {
    let x = 0;
    let y = 0;
    let win = el.ownerDocument.defaultView;
    while (win && win !== window) {
      const fe = win.frameElement;
      if (!fe) break;
      const r = fe.getBoundingClientRect();
      const cs = D.styleOf(fe);
      x += r.left + fe.clientLeft + parseFloat(cs.paddingLeft);
      y += r.top + fe.clientTop + parseFloat(cs.paddingTop);
      win = fe.ownerDocument.defaultView;
    }
    return { x, y };
  }

  /** @param {DOMRectReadOnly} r
   *  @returns {ActionRect} */
  function rectOf(r) {
    return { x: r.left, y: r.top, width: r.width, height: r.height };
  }

  /** The element's first non-empty layout box clipped to its viewport, or null. A box-less
   *  element (`display: contents`) uses its first visible child's.
   *  @param {Element} el
   *  @returns {ActionBox | null} */
  function visibleBox(el) {
    const win = el.ownerDocument.defaultView;
    const rects = el.getClientRects();
    if (!rects.length) {
      const kids = D.children(el);
      for (let i = 0; i < kids.length; i++) {
        if (kids[i].nodeType === 1 && D.isVisible(/** @type {Element} */ (kids[i]))) return visibleBox(/** @type {Element} */ (kids[i]));
      }
      return null;
    }
    for (let i = 0; i < rects.length; i++) {
      const r = rects[i];
      if (r.width <= 0 || r.height <= 0) continue;
      const left = Math.max(r.left, 0);
      const top = Math.max(r.top, 0);
      const right = Math.min(r.right, win.innerWidth);
      const bottom = Math.min(r.bottom, win.innerHeight);
      if (right <= left || bottom <= top) return null;
      return { left, top, right, bottom };
    }
    return null;
  }
  /** How many descendants `contentBox` looks at. */
  const CONTENT_LOOKS = 32;

  /** The box of the first visible descendant of zero-size `el` that has one in the viewport
   *  (flat tree, document order, at most `CONTENT_LOOKS` elements), or null.
   *  @param {Element} el
   *  @returns {ActionBox | null} */
  function contentBox(el) {
    const queue = Array.from(D.children(el)).filter((n) => n.nodeType === 1);
    for (let looks = 0; looks < CONTENT_LOOKS && queue.length; looks++) {
      const n = /** @type {Element} */ (queue.shift());
      if (D.isVisible(n)) {
        const box = visibleBox(n);
        if (box) return box;
      }
      queue.unshift(...Array.from(D.children(n)).filter((k) => k.nodeType === 1));
    }
    return null;
  }

  /** The key that activates `el` from the keyboard: Space for a checkbox, radio or switch,
   *  Enter for the rest (links, buttons, summaries).
   *  @param {Element} el */
  function activationKey(el) {
    const r = D.role(el);
    return r === "checkbox" || r === "radio" || r === "switch" ? "Space" : "Enter";
  }


  /** @param {Element} el */
  function fullyInView(el) {
    const win = el.ownerDocument.defaultView;
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= win.innerHeight && r.right <= win.innerWidth;
  }

  /** Topmost element at (x, y) of `doc`, descending through open shadow roots.
   *  @param {Document} doc
   *  @param {number} x
   *  @param {number} y */
  function hitTest(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  /** Whether a hit on `hit` counts as hitting `el` (unobscured, docs/mcp.md#actionability).
   *  @param {Element} el
   *  @param {Element | null} hit */
  function hitsTarget(el, hit) {
    if (!hit) return false;
    if (D.containsFlat(el, hit)) return true;
    const labels = /** @type {HTMLInputElement} */ (el).labels;
    if (labels) for (let i = 0; i < labels.length; i++) if (D.containsFlat(labels[i], hit)) return true;
    if (el.localName === "label" && /** @type {HTMLLabelElement} */ (el).control && D.containsFlat(/** @type {HTMLLabelElement} */ (el).control, hit)) return true;
    return false;
  }

  /** The document timeline's time (ms), or null for a document without one.
   *  @param {Document} doc
   *  @returns {number | null} */
  function timeOf(doc) {
    const timeline = doc.timeline;
    return timeline && timeline.currentTime !== null ? /** @type {number} */ (timeline.currentTime) : null;
  }

  /** Whether an animation that can move `el` has not moved anything yet at document time
   *  `time`: one on the document timeline whose target is `el` or a flat-tree ancestor (across
   *  same-origin frames, the frame element's), with its start pending or at `time` or later.
   *  Chromium resolves a new animation's start time at the first frame after it was created and
   *  holds its start value until then (longer for compositor animations), so at that frame a
   *  just-started animation or transition looks still: equal rects then prove nothing.
   *  Animations elsewhere are left out, so that a page starting them all the time (a progress
   *  bar retriggering a transition every frame) does not make every click wait for a frame
   *  without one.
   *  @param {Element} el
   *  @param {number | null} time */
  function animationStarting(el, time) {
    const own = timeOf(el.ownerDocument);
    let node = el;
    while (node) {
      const doc = node.ownerDocument;
      // Each document's timeline counts from its own origin: shift `time` onto this one's.
      const here = timeOf(doc);
      const at = time === null || own === null || here === null ? null : time + (here - own);
      if (doc.getAnimations) {
        for (const a of doc.getAnimations()) {
          if (a.playState !== "running" || a.timeline !== doc.timeline) continue;
          if (!(a.pending || a.startTime === null || (at !== null && /** @type {number} */ (a.startTime) >= at))) continue;
          const target = a.effect && /** @type {KeyframeEffect} */ (a.effect).target;
          if (target && D.containsFlat(target, node)) return true;
        }
      }
      const win = doc.defaultView;
      node = win && win !== window ? win.frameElement : null;
    }
    return false;
  }

  /** Animated properties (as `getKeyframes` names them) that move or resize a box. */
  const GEOMETRY = /^(transform|translate|rotate|scale|left|top|right|bottom|inset|width|height|minWidth|maxWidth|minHeight|maxHeight|margin|padding|border\w*Width|fontSize|lineHeight|zoom|perspective|offset[A-Z])/;

  /** Whether a running animation on the document timeline moves or resizes `el`: its target is
   *  `el` or a flat-tree ancestor (across same-origin frames, the frame element's) and one of
   *  its keyframes sets a geometry property. Such an element is not stable whatever two rects
   *  say; this does not depend on when layout last sampled the animation. Animations of other
   *  properties (a pulsing colour) do not count.
   *  @param {Element} el */
  function geometryAnimating(el) {
    let node = el;
    while (node) {
      const doc = node.ownerDocument;
      if (doc.getAnimations) {
        for (const a of doc.getAnimations()) {
          if (a.playState !== "running" || a.timeline !== doc.timeline || !a.effect) continue;
          const target = /** @type {KeyframeEffect} */ (a.effect).target;
          if (!target || !D.containsFlat(target, node) || !/** @type {KeyframeEffect} */ (a.effect).getKeyframes) continue;
          for (const frame of /** @type {KeyframeEffect} */ (a.effect).getKeyframes()) {
            for (const prop of Object.keys(frame)) if (GEOMETRY.test(prop)) return true;
          }
        }
      }
      const win = doc.defaultView;
      node = win && win !== window ? win.frameElement : null;
    }
    return false;
  }

  /** Records the time of `doc`'s next animation frame in `lastFrames`.
   *  @param {Document} doc */
  function watchNextFrame(doc) {
    const win = doc.defaultView;
    if (!win) return;
    win.requestAnimationFrame(() => {
      const time = timeOf(doc);
      if (time !== null) lastFrames.set(doc, time);
    });
  }

  /** Resolves with `{rect, time, proof}` read inside the first animation frame whose document
   *  time is later than `since` and in which no animation is starting: the frame's rendering
   *  steps have advanced CSS animations and transitions and run the page's earlier-registered
   *  rAF callbacks (a JS animation loop), and reading the rect there forces style and layout at
   *  that time (`proof: true`). If no such frame comes within 50 ms, resolves with what a timer
   *  sees then: a hidden document renders no frames, so nothing in it moves until it is shown
   *  (`proof: true`, as before this rule existed); a visible one is only late (a busy machine)
   *  and proves nothing yet (`proof: false`).
   *  @param {Element} el
   *  @param {number | null} since
   *  @returns {Promise<{rect: ActionRect, time: number | null, proof: boolean}>} */
  function rectNextFrame(el, since) {
    const doc = el.ownerDocument;
    const win = doc.defaultView;
    return new Promise((resolve) => {
      let settled = false;
      const finish = /** @param {boolean} proof */ (proof) => {
        if (settled) return;
        settled = true;
        resolve({ rect: rectOf(el.getBoundingClientRect()), time: timeOf(doc), proof });
      };
      const onFrame = () => {
        if (settled) return;
        const now = timeOf(doc);
        // The clock may already have been estimated at this frame's time when `since` was
        // read: only a later time proves the rect was laid out again.
        if (now !== null && since !== null && now <= since) win.requestAnimationFrame(onFrame);
        else if (animationStarting(el, now)) win.requestAnimationFrame(onFrame);
        else finish(true);
      };
      win.requestAnimationFrame(onFrame);
      win.setTimeout(() => finish(doc.visibilityState === "hidden"), 50);
    });
  }

  /** @param {ActionRect} a
   *  @param {ActionRect} b */
  function sameRect(a, b) {
    return a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;
  }

  /** `check({selector | ref, states:["visible"|"reachable","enabled","editable","unobscured"], scroll?,
   *  stable?, prepare?:"fill", keyboard?})` → Promise of `{status:"ok", point:{x,y},
   *  rect:{x,y,width,height}, tag, matched, fillable, editingHost, mode?, empty?, keyboard?}` |
   *  `{status:"no-match"}` | `{status:"not-visible", matched}` | `{status:"not-enabled"}` |
   *  `{status:"not-editable", fillable}` (`fillable:false` → fail at once, NOT_EDITABLE) |
   *  `{status:"unstable"}` | `{status:"outside-viewport"}` |
   *  `{status:"obscured", obscuredBy:"tag#id.class"}` | stale/invalid. States are checked in
   *  the order given ("reachable" = visible or a hidden text field, see `pick`); then, with
   *  `scroll`, the element is scrolled to the viewport centre unless
   *  fully in view; with `stable`, its rect must equal the one seen by the previous call if an
   *  animation frame has run since and no animation is starting, else the one read in the next
   *  animation frame in which no animation is starting (this call then waits for it, up to
   *  50 ms; see `rectNextFrame`). Coordinates are top-viewport CSS px. Without "visible" or
   *  "unobscured" in `states`, an invisible element is `ok` without `point`/`rect`. With
   *  `prepare:"fill"` (and "editable" in `states`), an actionable element is also readied for
   *  typing in the same call (`prepareFillOn`) and the answer carries its `mode` and `empty`.
   *  A zero-size control a person reaches is aimed at through what shows inside it; with
   *  nothing showing and `keyboard` (a click), the answer's `keyboard` names the key that
   *  activates it once focused (`Enter` or `Space`).
   *  @param {ActionTarget & {states?: string[], scroll?: boolean, stable?: boolean, prepare?: string, keyboard?: boolean}} args */
  async function check(args) {
    const states = args.states || [];
    const need = states.includes("reachable") ? "reachable" :
      states.includes("visible") || states.includes("unobscured") ? "visible" : false;
    const needVisible = need !== false;
    const p = pick(args, need);
    if (p.status !== "ok") return p;
    const el = p.element;
    for (const s of states) {
      if (s === "enabled" && !D.isEnabled(el)) return { status: "not-enabled", matched: p.matched };
      if (s === "editable" && !D.isEditable(el)) return { status: "not-editable", fillable: D.isFillable(el), matched: p.matched };
    }
    /** @type {{status: string, tag: string, matched: number, fillable: boolean, editingHost: boolean,
     *    point?: {x: number, y: number}, rect?: ActionRect, mode?: string, empty?: boolean, keyboard?: string}} */
    const res = { status: "ok", tag: el.localName, matched: p.matched, fillable: D.isFillable(el), editingHost: D.isEditingHost(el) };
    if (!needVisible && !D.isVisible(el)) return res;
    if (args.scroll && !fullyInView(el)) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    let rect = rectOf(el.getBoundingClientRect());
    if (args.stable) {
      // Stable = the same rect laid out at two different document times, with no animation
      // still holding its start value at the later one: CSS animations, transitions and rAF
      // loops only move things in animation frames. The previous call's observation is
      // evidence if a frame has run since it (the current layout is at least that frame's);
      // the timeline's time alone is not, as it can move on between frames. Else the next frame
      // gives the second observation.
      const doc = el.ownerDocument;
      const now = timeOf(doc);
      const prev = lastRects.get(el);
      const frame = lastFrames.get(doc);
      const prevIsEvidence = prev !== undefined && prev.time !== null && frame !== undefined &&
        frame > prev.time && !animationStarting(el, frame);
      let stable;
      if (prevIsEvidence) {
        lastRects.set(el, { rect, time: now });
        stable = sameRect(prev.rect, rect);
      } else {
        const next = await rectNextFrame(el, now);
        lastRects.set(el, { rect: next.rect, time: next.time });
        stable = next.proof && sameRect(rect, next.rect) && el.isConnected;
        rect = next.rect;
      }
      // The frame after this observation makes it evidence for the next call.
      watchNextFrame(doc);
      if (!stable || geometryAnimating(el)) return { status: "unstable" };
    }
    // A reachable field that is not visible (a code editor's transparent textarea) is typed
    // into, not seen: a pointer needs an area to aim at, the keyboard only its rect.
    const unseen = !D.isVisible(el);
    let box = visibleBox(el);
    if (!box && unseen && D.isReachableZeroSize(el)) {
      // A zero-size control a person reaches (docs/mcp.md#actionability): the pointer aims at
      // what shows of it (an icon overflowing a zero-width button); with nothing showing, a
      // click (`args.keyboard`) is the keyboard's (focus, then Enter or Space), the other
      // pointer actions have nothing to aim at (below), and the keyboard's own actions only
      // need its rect.
      box = contentBox(el);
      if (!box && args.keyboard) {
        res.keyboard = activationKey(el);
        const off = frameOffset(el);
        res.point = { x: rect.x + off.x, y: rect.y + off.y };
        res.rect = { x: rect.x + off.x, y: rect.y + off.y, width: rect.width, height: rect.height };
        return res;
      }
    }
    if (!box && unseen) {
      if (states.includes("unobscured")) return { status: "not-visible", matched: p.matched };
      box = { left: rect.x, top: rect.y, right: rect.x + rect.width, bottom: rect.y + rect.height };
    }
    if (!box) return { status: "outside-viewport" };
    const lx = (box.left + box.right) / 2;
    const ly = (box.top + box.bottom) / 2;
    if (states.includes("unobscured")) {
      const hit = hitTest(el.ownerDocument, lx, ly);
      if (!hitsTarget(el, hit)) return { status: "obscured", obscuredBy: hit ? D.describe(hit) : "nothing" };
    }
    const off = frameOffset(el);
    res.point = { x: lx + off.x, y: ly + off.y };
    res.rect = { x: rect.x + off.x, y: rect.y + off.y, width: rect.width, height: rect.height };
    if (args.prepare === "fill") Object.assign(res, prepareFillOn(/** @type {HTMLElement} */ (el)));
    return res;
  }

  /** `element(target)` → the element a check would act on (first visible match, else first
   *  match; a ref's element) or null. For `returnByValue:false` callers needing an objectId.
   *  @param {ActionTarget} t */
  function element(t) {
    const p = pick(t, "reachable");
    if (p.status === "ok") return p.element;
    const r = resolveTarget(t);
    return r.status === "ok" ? r.elements[0] : null;
  }

  /** `scrollToCenter(target)` → `{status:"ok"}` | failure: scrolls the element to the viewport
   *  centre (browser_element scroll).
   *  @param {ActionTarget} t */
  function scrollToCenter(t) {
    const p = pick(t, "visible");
    if (p.status !== "ok") return p;
    p.element.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    return { status: "ok" };
  }

  /** `focusEnd(target)` → `{status:"ok", focused}`: focus() without a click, caret after the
   *  existing text (inputs that support selection, textareas, editing hosts).
   *  @param {ActionTarget} t */
  function focusEnd(t) {
    const p = pick(t, "reachable");
    if (p.status !== "ok") return p;
    const el = /** @type {HTMLElement} */ (p.element);
    el.focus({ preventScroll: true });
    caretToEnd(el);
    return { status: "ok", focused: deepActive(el.ownerDocument) === el };
  }

  /** @param {HTMLElement} el */
  function caretToEnd(el) {
    if (el.localName === "input" || el.localName === "textarea") {
      try { const n = /** @type {TextField} */ (el).value.length; /** @type {TextField} */ (el).setSelectionRange(n, n); } catch (e) { /* type without selection */ }
    } else if (el.isContentEditable) {
      const sel = el.ownerDocument.getSelection();
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
    }
  }

  /** @param {Document} doc */
  function deepActive(doc) {
    let a = doc.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }

  /** Readies an editable element for fill: `{mode:"type", empty}` after focusing it and
   *  selecting all its content, so that typed keys replace it (send Delete first unless
   *  `empty`); `{mode:"set", empty}` for date/time/color/range inputs, which take `setValue`
   *  instead of typing. Run by `check` with `prepare:"fill"`.
   *  @param {HTMLElement} el */
  function prepareFillOn(el) {
    if (el.localName === "input" && SET_VALUE_TYPES.has(/** @type {HTMLInputElement} */ (el).type)) return { mode: "set", empty: /** @type {HTMLInputElement} */ (el).value === "" };
    el.focus({ preventScroll: true });
    selectAll(el);
    const empty = el.localName === "input" || el.localName === "textarea" ? /** @type {TextField} */ (el).value === "" : el.textContent === "";
    return { mode: "type", empty };
  }

  /** @param {HTMLElement} el */
  function selectAll(el) {
    if (el.localName === "input" || el.localName === "textarea") {
      try { /** @type {TextField} */ (el).select(); } catch (e) { /* no selection API */ }
      try { /** @type {TextField} */ (el).setSelectionRange(0, /** @type {TextField} */ (el).value.length); } catch (e) { /* email/number inputs */ }
    } else {
      const sel = el.ownerDocument.getSelection();
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      sel.removeAllRanges();
      sel.addRange(range);
    }
  }

  /** @param {Element} el
   *  @param {string} type */
  function fire(el, type) {
    el.dispatchEvent(new Event(type, { bubbles: true, composed: type === "input" }));
  }

  /** `setValue(target, value)` → `{status:"ok", value}` | `{status:"rejected", value}` (the input
   *  did not take it; old value restored) | `{status:"not-settable"}` | failure. For date, time,
   *  datetime-local, month, week, color and range inputs; fires `input` and `change`.
   *  @param {ActionTarget} t
   *  @param {string} value */
  function setValue(t, value) {
    const p = pick(t, "visible");
    if (p.status !== "ok") return p;
    // An input, or the answer is "not-settable" at once.
    const el = /** @type {HTMLInputElement} */ (p.element);
    if (el.localName !== "input" || !SET_VALUE_TYPES.has(el.type)) return { status: "not-settable" };
    const old = el.value;
    el.focus({ preventScroll: true });
    el.value = value;
    const took = el.type === "color" ? el.value === value.toLowerCase() : el.value === value;
    if (!took) { el.value = old; return { status: "rejected", value: el.value }; }
    fire(el, "input");
    fire(el, "change");
    return { status: "ok", value: el.value };
  }

  /** `clear(target)` → `{status:"ok"}` | `{status:"not-editable", fillable}` | failure: empties an
   *  editable field (as a delete would), firing `input` and `change`.
   *  @param {ActionTarget} t */
  function clear(t) {
    const p = pick(t, "reachable");
    if (p.status !== "ok") return p;
    // Editable, or the answer is "not-editable" at once.
    const el = /** @type {HTMLElement} */ (p.element);
    if (!D.isEditable(el)) return { status: "not-editable", fillable: D.isFillable(el) };
    el.focus({ preventScroll: true });
    const isField = el.localName === "input" || el.localName === "textarea";
    if (isField ? /** @type {TextField} */ (el).value !== "" : el.textContent !== "") {
      selectAll(el);
      el.ownerDocument.execCommand("delete");
      if (isField ? /** @type {TextField} */ (el).value !== "" : el.textContent !== "") {
        if (isField) /** @type {TextField} */ (el).value = ""; else el.textContent = "";
        fire(el, "input");
      }
    }
    fire(el, "change");
    return { status: "ok" };
  }

  /** The checkable element behind `el`: itself, or the control of a `<label>`; or null.
   *  @param {Element} el
   *  @returns {CheckableElement | null} */
  function checkable(el) {
    if (el.localName === "input" && (/** @type {HTMLInputElement} */ (el).type === "checkbox" || /** @type {HTMLInputElement} */ (el).type === "radio")) return el;
    if (CHECK_ROLES.has(D.explicitRole(el))) return el;
    if (el.localName === "label" && /** @type {HTMLLabelElement} */ (el).control) return checkable(/** @type {HTMLLabelElement} */ (el).control);
    return null;
  }

  /** `checkState(target)` → `{status:"ok", kind:"checkbox"|"radio"|<role>, checked:true|false|
   *  "mixed"}` | `{status:"not-checkable"}` | failure. Reads the state of a checkbox/radio input,
   *  an element with role checkbox/switch/radio/menuitemcheckbox/menuitemradio, or the input of a
   *  `<label>` (browser_element check/uncheck).
   *  @param {ActionTarget} t */
  function checkState(t) {
    const r = resolveTarget(t);
    if (r.status !== "ok") return r;
    const p = pick(t, false);
    const target = checkable(p.element || r.elements[0]);
    if (!target) return { status: "not-checkable" };
    if (target.localName === "input") {
      return { status: "ok", kind: target.type, checked: target.indeterminate && target.type === "checkbox" ? "mixed" : target.checked };
    }
    const a = target.getAttribute("aria-checked");
    return { status: "ok", kind: D.explicitRole(target), checked: a === "mixed" ? "mixed" : a === "true" };
  }

  /** `selectOption(target, value)` → `{status:"ok", value, label}` | `{status:"not-select"}` |
   *  `{status:"no-option", options:[{value, label, disabled}] (≤20), count}` |
   *  `{status:"disabled-option", value, label}` | failure. Picks the first option whose `value`
   *  attribute equals `value`, else whose trimmed label does; fires `input` and `change`.
   *  @param {ActionTarget} t
   *  @param {string} value */
  function selectOption(t, value) {
    const p = pick(t, "visible");
    if (p.status !== "ok") return p;
    // A select, or the answer is "not-select" at once.
    const el = /** @type {HTMLSelectElement} */ (p.element);
    if (el.localName !== "select") return { status: "not-select" };
    const opts = Array.from(el.options);
    const opt = opts.find((o) => o.getAttribute("value") === value) || opts.find((o) => o.label.trim() === value);
    if (!opt) {
      return {
        status: "no-option", count: opts.length,
        options: opts.slice(0, 20).map((o) => ({ value: o.value, label: o.label.trim(), disabled: o.matches(":disabled") })),
      };
    }
    if (opt.matches(":disabled")) return { status: "disabled-option", value: opt.value, label: opt.label.trim() };
    el.focus({ preventScroll: true });
    for (const o of opts) o.selected = o === opt;
    fire(el, "input");
    fire(el, "change");
    return { status: "ok", value: opt.value, label: opt.label.trim() };
  }

  /** The `<input type=file>` behind `el` (itself or its label's control), or null.
   *  @param {Element} el
   *  @returns {HTMLInputElement | null} */
  function fileInputOf(el) {
    if (el.localName === "input" && /** @type {HTMLInputElement} */ (el).type === "file") return /** @type {HTMLInputElement} */ (el);
    if (el.localName === "label" && /** @type {HTMLLabelElement} */ (el).control && /** @type {HTMLLabelElement} */ (el).control.localName === "input" && /** @type {HTMLInputElement} */ (/** @type {HTMLLabelElement} */ (el).control).type === "file") return /** @type {HTMLInputElement} */ (/** @type {HTMLLabelElement} */ (el).control);
    return null;
  }

  /** `fileInputInfo(target)` → `{status:"ok", multiple, enabled, connected}` |
   *  `{status:"not-file-input"}` | failure. Visibility is never required (browser_upload).
   *  @param {ActionTarget} t */
  function fileInputInfo(t) {
    const p = pick(t, false);
    if (p.status !== "ok") return p;
    const input = fileInputOf(p.element);
    if (!input) return { status: "not-file-input" };
    return { status: "ok", multiple: input.multiple, enabled: D.isEnabled(input), connected: input.isConnected };
  }

  /** `fileInput(target)` → the file input element or null. Call with `returnByValue:false` and
   *  pass its objectId to `DOM.setFileInputFiles`, which fires `input` and `change` itself.
   *  @param {ActionTarget} t */
  function fileInput(t) {
    const p = pick(t, false);
    return p.status === "ok" ? fileInputOf(p.element) : null;
  }

  /** @param {Element} el */
  function textMatch(el) {
    return D.cut(D.normalize(D.renderedText(el)), 60);
  }

  /** `find({selector, all?, limit?=20, offset?=0})` → `{status:"ok", count, offset, limit,
   *  matches:[{index, tag, text, visible}], truncated, nextOffset}` | failure (zero matches is
   *  `count:0`, not a failure). `all:false` gives the first match only (`truncated: count > 1`).
   *  @param {ActionTarget & {all?: boolean, limit?: number, offset?: number}} args */
  function find(args) {
    const r = resolveTarget(args);
    if (r.status === "no-match") return { status: "ok", count: 0, offset: 0, limit: 0, matches: [], truncated: false, nextOffset: null };
    if (r.status !== "ok") return r;
    const els = r.elements;
    const all = !!args.all;
    const limit = all ? args.limit || 20 : 1;
    const offset = all ? args.offset || 0 : 0;
    const matches = [];
    for (let i = offset; i < els.length && i < offset + limit; i++) {
      matches.push({ index: i, tag: els[i].localName, text: textMatch(els[i]), visible: D.isVisible(els[i]) });
    }
    const more = offset + limit < els.length;
    return { status: "ok", count: els.length, offset, limit, matches, truncated: all ? more : els.length > 1, nextOffset: all && more ? offset + limit : null };
  }

  /** `exists({selector})` → `{status:"ok", exists, count}` | stale/invalid.
   *  @param {ActionTarget} args */
  function exists(args) {
    const r = resolveTarget(args);
    if (r.status === "no-match") return { status: "ok", exists: false, count: 0 };
    if (r.status !== "ok") return r;
    return { status: "ok", exists: true, count: r.elements.length };
  }

  const MAX_READ = 32768;

  /** Cuts `s` to at most `max` UTF-8 bytes on a character boundary.
   *  @param {string} s
   *  @param {number} max */
  function capBytes(s, max) {
    const bytes = new TextEncoder().encode(s);
    if (bytes.length <= max) return { text: s, truncated: false, totalBytes: bytes.length };
    let end = max;
    while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
    return { text: new TextDecoder().decode(bytes.subarray(0, end)), truncated: true, totalBytes: bytes.length };
  }

  /** `read({selector?, field:"text"|"attr"|"value"|"is", name?, what?:"visible"|"enabled"|
   *  "checked"})` → `{status:"ok", text, truncated, totalBytes}` (text: trimmed `innerText` of the
   *  first match, else the body, ≤32 KiB) | `{status:"ok", name, value|null, truncated,
   *  totalBytes}` (attr) | `{status:"ok", value, truncated, totalBytes}` (value) |
   *  `{status:"ok", what, result}` (is; no match → visible false) | `{status:"no-value"}` (value
   *  of something other than input/textarea/select) | failure.
   *  @param {ActionTarget & {field?: string, name?: string, what?: string}} args */
  function read(args) {
    const field = args.field || "text";
    /** @type {Element} */
    let el;
    if (args.selector == null && args.ref == null) {
      if (field !== "text") return { status: "no-match" };
      el = document.body || document.documentElement;
    } else {
      const r = resolveTarget(args);
      if (r.status === "no-match" && field === "is" && args.what === "visible") return { status: "ok", what: "visible", result: false };
      if (r.status !== "ok") return r;
      el = r.elements[0];
    }
    switch (field) {
      case "text": {
        const c = capBytes(D.renderedText(el).trim(), MAX_READ);
        return { status: "ok", text: c.text, truncated: c.truncated, totalBytes: c.totalBytes };
      }
      case "attr": {
        const v = el.getAttribute(args.name);
        if (v === null) return { status: "ok", name: args.name, value: null, truncated: false, totalBytes: 0 };
        const c = capBytes(v, MAX_READ);
        return { status: "ok", name: args.name, value: c.text, truncated: c.truncated, totalBytes: c.totalBytes };
      }
      case "value": {
        const tag = el.localName;
        if (tag !== "input" && tag !== "textarea" && tag !== "select") return { status: "no-value", tag };
        const c = capBytes(/** @type {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} */ (el).value, MAX_READ);
        return { status: "ok", value: c.text, truncated: c.truncated, totalBytes: c.totalBytes };
      }
      case "is": {
        const what = args.what;
        let result;
        if (what === "visible") result = D.isVisible(el);
        else if (what === "enabled") result = D.isEnabled(el);
        else result = (el.localName === "input" && !!/** @type {HTMLInputElement} */ (el).checked) || el.getAttribute("aria-checked") === "true";
        return { status: "ok", what, result };
      }
      default: return { status: "bad-field" };
    }
  }

  return {
    check, element, scrollToCenter, focusEnd, setValue, clear, checkState, selectOption,
    fileInputInfo, fileInput, find, exists, read,
  };
})
