// @ts-check
// screenshot: what a capture needs from the page. `rect` finds the element box to clip to;
// `prepare` hides what must not vary between two captures (masks, animations, transitions,
// the caret) and `restore` undoes it. The page sees the temporary style elements, the
// `data-chromate-mask` attribute on masked elements and (for frames) mask boxes only while a
// capture runs.
/** @type {(C: Chromate) => object} */
(function (C) {
  "use strict";
  const D = C.dom;

  /** What one `prepare` changed: style elements and mask boxes it added, animations it
   *  cancelled, listeners it added, elements it marked, the observer that re-marks.
   *  @typedef {{nodes: Element[], cancelled: Animation[], listeners: [string, (e: Event) => void][], marked: Element[], observer: MutationObserver | null}} CaptureState */

  /** What `prepare` changed, for `restore`. @type {CaptureState | null} */
  let applied = null;

  /** `rect({selector?, ref?})` → `{status:"ok", x, y, width, height, matched}` in document
   *  coordinates of the top page (no scrolling) | `{status:"not-visible", matched}` |
   *  `{status:"no-match"}` | `{status:"stale-ref", ref, reason}` |
   *  `{status:"invalid-selector", reason, browserMessage?}`. The first visible match counts.
   *  @param {{selector?: string, ref?: number}} t */
  function rect(t) {
    const sel = t.ref != null ? "ref=e" + t.ref : t.selector;
    const r = C.selector.resolve(sel);
    if (!r.ok) {
      if (r.error === "stale-ref") return { status: "stale-ref", ref: r.ref, reason: r.status };
      return { status: "invalid-selector", reason: r.reason, browserMessage: r.browserMessage };
    }
    if (!r.elements.length) return { status: "no-match" };
    for (const el of r.elements) {
      if (!D.isVisible(el)) continue;
      const b = el.getBoundingClientRect();
      const off = frameOffset(el);
      return {
        status: "ok",
        x: b.left + off.x + window.scrollX,
        y: b.top + off.y + window.scrollY,
        width: b.width,
        height: b.height,
        matched: r.elements.length,
      };
    }
    return { status: "not-visible", matched: r.elements.length };
  }

  /** Offset of `el`'s window inside the top window (same-origin frames).
   *  @param {Element} el */
  function frameOffset(el) {
    let x = 0;
    let y = 0;
    let win = el.ownerDocument.defaultView;
    while (win && win !== window) {
      const fe = win.frameElement;
      if (!fe) break;
      const b = fe.getBoundingClientRect();
      x += b.left + fe.clientLeft;
      y += b.top + fe.clientTop;
      win = fe.ownerDocument.defaultView;
    }
    return { x, y };
  }

  /** `prepare({mask: string[], color, freeze})` → `{ok:true, masked}` | `{ok:false, error,
   *  selector, reason?}`. `freeze` finishes finite animations and transitions, cancels
   *  infinite ones and hides the caret; each mask selector's matches are painted as a solid
   *  box of `color` (their border box at paint time, see below) until `restore`.
   *  @param {{mask?: string[], color: string, freeze?: boolean}} a */
  function prepare(a) {
    restore();
    /** @type {CaptureState} */
    const state = { nodes: [], cancelled: [], listeners: [], marked: [], observer: null };
    applied = state;
    const root = document.documentElement;
    // A document that has only been committed (nothing parsed yet) has nothing to freeze or
    // mask.
    if (!root) return { ok: true, masked: 0 };
    if (a.freeze) {
      // Only the focused element shows a caret: a rule for `:focus` alone, so inserting and
      // removing it restyles that element, not the whole document (a `*` rule costs a style
      // recalculation of every element, twice per capture).
      const style = document.createElement("style");
      style.textContent = ":focus { caret-color: transparent !important; }";
      (document.head || root).appendChild(style);
      state.nodes.push(style);
      const still = /** @param {Animation} anim */ (anim) => {
        const timing = anim.effect && anim.effect.getComputedTiming ? anim.effect.getComputedTiming() : null;
        if (timing && Number.isFinite(timing.endTime)) {
          try {
            anim.finish();
            return;
          } catch (e) {
            // Fall through: an animation that cannot finish is cancelled instead.
          }
        }
        anim.cancel();
        state.cancelled.push(anim);
      };
      for (const anim of document.getAnimations()) still(anim);
      // One that starts while the capture runs is stopped as it starts.
      const onStart = /** @param {Event} event */ (event) => {
        const target = /** @type {Element | null} */ (event.target);
        if (!target || typeof target.getAnimations !== "function") return;
        for (const anim of target.getAnimations()) still(anim);
      };
      for (const type of ["transitionrun", "animationstart"]) {
        document.addEventListener(type, onStart, true);
        state.listeners.push([type, onStart]);
      }
    }
    const mask = a.mask || [];
    if (!mask.length) return { ok: true, masked: 0 };
    // Masks are rules, not boxes measured now: the matches get an attribute of this capture
    // and a style element covers whatever carries it (and, for css= selectors, whatever the
    // selector matches) when the frame is painted, so an element that is empty now and filled
    // later, or grows, is covered at its box of that moment. A MutationObserver re-marks after
    // every change the page makes (its callback runs before the page is painted again), so a
    // node the page puts in place of a marked one is marked too.
    const token = "m" + Date.now().toString(36) + Math.random().toString(36).slice(2);
    const mark = "[" + MARK + '="' + token + '"]';
    const targets = [mark];
    for (const sel of mask) {
      const r = C.selector.resolve(sel);
      if (!r.ok) return { ok: false, error: r.error, selector: sel, reason: r.reason || r.status };
      const p = C.selector.parse(sel);
      if (p.ok && p.engine === "css") targets.push(":is(" + p.value + ")");
    }
    /** @type {Set<Node>} */
    const styled = new Set();
    /** Puts the mask rules in `node`'s document or shadow root, once. */
    const styleRoot = (/** @type {Node} */ node) => {
      const at = node.getRootNode();
      if (styled.has(at)) return;
      styled.add(at);
      const style = document.createElement("style");
      if (at instanceof ShadowRoot) at.appendChild(style);
      else (document.head || root).appendChild(style);
      state.nodes.push(style);
      const sheet = style.sheet;
      if (!sheet) return;
      // One rule at a time: a css= selector the stylesheet parser reads differently from
      // querySelectorAll is refused alone (its matches still carry the attribute).
      for (const target of at instanceof ShadowRoot ? [mark] : targets) {
        for (const rule of maskRules(target, a.color)) {
          try {
            sheet.insertRule(rule, sheet.cssRules.length);
          } catch (e) {
            // Refused: the attribute rule covers what this selector matched.
          }
        }
      }
    };
    styleRoot(root);
    const markAll = () => {
      for (const sel of mask) {
        const r = C.selector.resolve(sel);
        if (!r.ok) continue;
        for (const el of r.elements) {
          if (el.getAttribute(MARK) === token) continue;
          el.setAttribute(MARK, token);
          state.marked.push(el);
          styleRoot(el);
          if (OPAQUE.has(el.localName)) cover(el, a.color, state);
        }
      }
    };
    markAll();
    const masked = state.marked.length;
    const observer = new MutationObserver(markAll);
    observer.observe(root, { childList: true, subtree: true, attributes: true, characterData: true });
    state.observer = observer;
    return { ok: true, masked };
  }

  /** The attribute that marks a capture's masked elements (its value is the capture's token). */
  const MARK = "data-chromate-mask";

  /** Elements whose content a background does not cover (a frame's document, a plugin): they
   *  get a box over their border box as measured when they are marked. */
  const OPAQUE = new Set(["iframe", "frame", "embed", "object"]);

  /** The rules that mask `target` (one selector) in `color`: the element's background
   *  and borders in the colour, its text transparent, its descendants and pseudo-elements not
   *  painted, a replaced element's image moved out of its box. Nothing here changes layout. */
  function maskRules(/** @type {string} */ target, /** @type {string} */ color) {
    const solid = [
      "background: " + color,
      "border-color: " + color,
      "border-image: none",
      "color: transparent",
      "-webkit-text-fill-color: transparent",
      "-webkit-text-stroke-color: transparent",
      "text-decoration-color: transparent",
      "text-shadow: none",
      "box-shadow: none",
      "outline-color: " + color,
      "caret-color: transparent",
      "filter: none",
      "opacity: 1",
      "object-position: 100000px 100000px",
    ];
    return [
      target + " { " + solid.map((d) => d + " !important;").join(" ") + " }",
      target + " * { visibility: hidden !important; }",
      target + "::before, " + target + "::after, " + target + "::marker { visibility: hidden !important; }",
    ];
  }

  /** A solid box of `color` over `el`'s border box as it is now (for `OPAQUE` elements).
   *  @param {Element} el
   *  @param {string} color
   *  @param {CaptureState} state */
  function cover(el, color, state) {
    const b = el.getBoundingClientRect();
    if (b.width <= 0 || b.height <= 0) return;
    const off = frameOffset(el);
    const box = document.createElement("div");
    box.style.cssText =
      "position:absolute;margin:0;padding:0;border:0;pointer-events:none;z-index:2147483647;" +
      "left:" + (b.left + off.x + window.scrollX) + "px;top:" + (b.top + off.y + window.scrollY) + "px;" +
      "width:" + b.width + "px;height:" + b.height + "px;background:" + color + " !important;";
    document.documentElement.appendChild(box);
    state.nodes.push(box);
  }

  /** `restore()` → true: removes the style element and mask boxes, replays cancelled
   *  animations. */
  function restore() {
    if (!applied) return true;
    if (applied.observer) applied.observer.disconnect();
    for (const el of applied.marked) el.removeAttribute(MARK);
    for (const node of applied.nodes) node.remove();
    for (const [type, listener] of applied.listeners) document.removeEventListener(type, listener, true);
    for (const anim of applied.cancelled) {
      try {
        anim.play();
      } catch (e) {
        // An animation whose element is gone cannot play again; nothing to restore.
      }
    }
    applied = null;
    return true;
  }

  /** `documentSize()` → `{width, height}`: the scrollable size of the top document. */
  function documentSize() {
    const el = document.documentElement;
    const body = document.body;
    const width = Math.max(el.scrollWidth, body ? body.scrollWidth : 0, el.clientWidth);
    const height = Math.max(el.scrollHeight, body ? body.scrollHeight : 0, el.clientHeight);
    return { width, height };
  }

  return { rect, prepare, restore, documentSize };
})
