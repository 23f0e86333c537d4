// @ts-check
// screenshot: what a capture needs from the page. `rect` finds the element box to clip to;
// `prepare` hides what must not vary between two captures (masks, animations, transitions,
// the caret) and `restore` undoes it. The page sees the temporary style element and mask boxes
// only while a capture runs.
(function (C) {
  "use strict";
  const D = C.dom;

  /** What `prepare` changed, for `restore`. */
  let applied = null;

  /** `rect({selector?, ref?})` → `{status:"ok", x, y, width, height, matched}` in document
   *  coordinates of the top page (no scrolling) | `{status:"not-visible", matched}` |
   *  `{status:"no-match"}` | `{status:"stale-ref", ref, reason}` |
   *  `{status:"invalid-selector", reason, browserMessage?}`. The first visible match counts. */
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

  /** Offset of `el`'s window inside the top window (same-origin frames). */
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
   *  infinite ones and hides the caret; each mask selector's matches get a solid box of
   *  `color` over their border box. */
  function prepare(a) {
    restore();
    const state = { nodes: [], cancelled: [], listeners: [] };
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
      const still = (anim) => {
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
      const onStart = (event) => {
        const target = event.target;
        if (!target || typeof target.getAnimations !== "function") return;
        for (const anim of target.getAnimations()) still(anim);
      };
      for (const type of ["transitionrun", "animationstart"]) {
        document.addEventListener(type, onStart, true);
        state.listeners.push([type, onStart]);
      }
    }
    let masked = 0;
    for (const sel of a.mask || []) {
      const r = C.selector.resolve(sel);
      if (!r.ok) return { ok: false, error: r.error, selector: sel, reason: r.reason || r.status };
      for (const el of r.elements) {
        const b = el.getBoundingClientRect();
        if (b.width <= 0 || b.height <= 0) continue;
        const off = frameOffset(el);
        const box = document.createElement("div");
        box.style.cssText =
          "position:absolute;margin:0;padding:0;border:0;pointer-events:none;z-index:2147483647;" +
          "left:" + (b.left + off.x + window.scrollX) + "px;top:" + (b.top + off.y + window.scrollY) + "px;" +
          "width:" + b.width + "px;height:" + b.height + "px;background:" + a.color + " !important;";
        root.appendChild(box);
        state.nodes.push(box);
        masked += 1;
      }
    }
    return { ok: true, masked };
  }

  /** `restore()` → true: removes the style element and mask boxes, replays cancelled
   *  animations. */
  function restore() {
    if (!applied) return true;
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
