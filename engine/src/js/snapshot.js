// snapshot: the §7 walk. Returns structured line records; Rust renders them (§7.6) and splices
// in the lines of cross-origin frames, which it walks itself in their own isolated worlds.
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

  /** Whether `s` (camelCase split, lower-cased) holds a §7.7 secret term as a whole word. */
  function isSecretWord(s) {
    return !!s && SECRET_WORD.test(D.words(s));
  }

  /** Whether the value of field `el` (with accessible name `name`) is secret per §7.7. */
  function isSecretField(el, name) {
    if (el.localName === "input" && NO_VALUE_TYPES.has(el.type)) return true;
    const ac = el.getAttribute("autocomplete");
    if (ac) {
      for (const t of ac.toLowerCase().split(/\s+/)) {
        if (SECRET_AUTOCOMPLETE.has(t) || t.startsWith("cc-")) return true;
      }
    }
    for (const a of ["id", "name", "placeholder", "aria-label"]) if (isSecretWord(el.getAttribute(a))) return true;
    return isSecretWord(name);
  }

  /** The printable value of `el` (§7.7): select/textarea/input/editing host, secrets omitted. */
  function valueOf(el, name, editingHost) {
    const tag = el.localName;
    let v;
    if (tag === "select") {
      const o = el.selectedOptions && el.selectedOptions[0];
      v = o ? o.value : "";
    } else if (tag === "textarea" || tag === "input") v = el.value;
    else if (editingHost) v = D.normalize(el.innerText);
    else return undefined;
    if (!v || isSecretField(el, name)) return undefined;
    return D.cut(v, 80);
  }

  /** Destination of a link (§7.6): same-origin → path+query+fragment, else absolute; cut at 80. */
  function hrefOf(el) {
    if (!el.hasAttribute("href")) return undefined;
    const abs = el.href;
    if (typeof abs !== "string" || !abs) return undefined;
    let s = abs;
    try {
      const u = new URL(abs);
      if (u.origin === el.ownerDocument.location.origin && u.origin !== "null") s = u.pathname + u.search + u.hash;
    } catch (e) { /* keep the absolute text */ }
    return D.cut(s, 80);
  }

  /** Hint (§7.6): `#id`, else `[data-testid="v"]`/`[data-test-id="v"]`, else `tag[name="v"]`. */
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

  /** The snapshot class of `el` (§7.2): "evidence", "semantic", "text" or null; `r` its role. */
  function classify(el, tag, r) {
    if (EVIDENCE_TAGS.has(tag) || D.isLive(el) || EVIDENCE_ROLES.has(r)) return "evidence";
    if ((TEXT_TAGS.has(tag) || ((tag === "div" || tag === "span") && el.firstElementChild === null)) &&
      D.hasEvidenceId(el)) return "evidence";
    if (SEMANTIC_TAGS.has(tag) || el.hasAttribute("role") || el.shadowRoot) return "semantic";
    if (tag === "input") return el.type === "hidden" ? null : "semantic";
    if (el.hasAttribute("contenteditable") && D.isEditingHost(el)) return "semantic";
    if (TEXT_TAGS.has(tag)) return "text";
    return null;
  }

  /** Index of `iframe` among the iframes of its document (light DOM and open shadow roots, tree
   *  order); the same order `frameOwner` uses. */
  function iframeIndex(iframe, cache) {
    const doc = iframe.ownerDocument;
    let list = cache.get(doc);
    if (!list) { list = allIframes(doc); cache.set(doc, list); }
    return list.indexOf(iframe);
  }

  function allIframes(doc) {
    const out = [];
    (function scan(root) {
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
   *  to learn its `frameId`. */
  function frameOwner(index) {
    return allIframes(document)[index] || null;
  }

  /** `take({nextRef, budgets:{semantic, evidence, text}, scopeRef?, scopeSelector?})` →
   *  `{lines:[{depth, ref?, role, container?, name?, level?, href?, value?, hint?, disabled?,
   *  checked?:true|"mixed", selected?, expanded?, pressed?, current?, kind:"semantic"|"evidence"|
   *  "text"|"shadow"|"iframe", frame?:{index}}], nextRef, budgets:{semantic, evidence, text},
   *  truncated, title, url, ms}` | `{error:"invalid selector"|"stale-ref"|"no-match", …}`.
   *  Same-origin iframes are walked in place; a cross-origin one gets `frame:{index}` and no
   *  content (Rust walks it and splices its lines after the iframe line, each `depth` + iframe
   *  depth + 1). `depth` counts indentation levels (two spaces each). */
  function take(args) {
    const t0 = performance.now();
    args = args || {};
    const b = args.budgets || {};
    const st = {
      lines: [],
      nextRef: args.nextRef || 1,
      left: { semantic: num(b.semantic, 80), evidence: num(b.evidence, 10), text: num(b.text, 7) },
      truncated: false,
      frames: new Map(),
    };
    let root = null;
    if (args.scopeRef != null || args.scopeSelector != null) {
      const sel = args.scopeRef != null ? "ref=e" + args.scopeRef : args.scopeSelector;
      const r = C.selector.resolve(sel);
      if (!r.ok) return r;
      if (!r.elements.length) return { ok: false, error: "no-match", canonical: r.canonical };
      root = r.elements[0];
      if (!D.underHidden(root)) visitElement(st, root, 0);
    } else {
      const de = document.documentElement;
      if (de) walkChildren(st, de, 0);
    }
    return {
      lines: st.lines, nextRef: st.nextRef, budgets: st.left, truncated: st.truncated,
      title: document.title, url: document.URL, ms: performance.now() - t0,
    };
  }

  function num(v, d) {
    return typeof v === "number" && v >= 0 ? v : d;
  }

  /** Whether every budget is spent; once also something was left out the walk can stop. */
  function done(st) {
    return st.truncated && st.left.semantic === 0 && st.left.evidence === 0 && st.left.text === 0;
  }

  function walkChildren(st, node, depth) {
    const kids = D.children(node);
    for (let i = 0; i < kids.length; i++) {
      const n = kids[i];
      if (n.nodeType !== 1) continue;
      if (done(st)) return;
      visitElement(st, n, depth);
    }
  }

  function visitElement(st, el, depth) {
    if (D.attrHidden(el)) return;
    const tag = el.localName;
    if (tag === "slot" && D.isShadowSlot(el)) { walkChildren(st, el, depth); return; }
    if (tag === "script" || tag === "style" || tag === "template" || tag === "head" || tag === "noscript") return;
    const r = D.role(el);
    let cls = r === "none" || r === "presentation" ? null : classify(el, tag, r);
    if ((tag === "header" || tag === "footer") && r === null && !el.hasAttribute("role")) cls = null;
    let childDepth = depth;
    let listed = false;
    if (cls) {
      if (!D.isVisible(el)) {
        // A display:none or opacity:0 element hides its whole subtree: no need to walk it.
        const cs = D.styleOf(el);
        if (cs.display === "none" || cs.opacity === "0") return;
      } else if (st.left[cls] === 0) {
        if (!st.truncated) {
          if (cls === "semantic") st.truncated = true;
          else {
            const t = D.normalize(D.visibleText(el, false));
            if (t && !(cls === "text" && t.length > MAX_TEXT)) st.truncated = true;
          }
        }
        if (done(st)) return;
      } else {
        const line = makeLine(st, el, tag, r, cls, depth);
        if (line) {
          st.left[cls]--;
          listed = true;
          if (line.container) childDepth = depth + 1;
          if (tag === "iframe") { walkFrame(st, el, line, depth + 1); return; }
        }
      }
    }
    const sr = el.shadowRoot;
    if (sr) {
      walkShadow(st, el, listed ? depth + 1 : depth);
      return;
    }
    if (tag === "iframe") return;
    walkChildren(st, el, childDepth);
  }

  /** Walks an open shadow root under a `#shadow-root (open)` marker at `depth`, content one level
   *  deeper; the marker stays only if the shadow tree yields a line. */
  function walkShadow(st, host, depth) {
    const at = st.lines.length;
    const reserved = st.left.semantic > 0;
    if (reserved) st.left.semantic--;
    walkChildren(st, host, depth + 1);
    if (st.lines.length === at) { if (reserved) st.left.semantic++; return; }
    if (reserved) st.lines.splice(at, 0, { depth, role: "#shadow-root (open)", kind: "shadow" });
    else st.truncated = true;
  }

  /** Same-origin frame: walk its document in place; cross-origin: mark the line for Rust. */
  function walkFrame(st, iframe, line, depth) {
    let doc = null;
    try { doc = iframe.contentDocument; } catch (e) { doc = null; }
    if (doc) {
      if (doc.documentElement) walkChildren(st, doc.documentElement, depth);
      return;
    }
    if (iframe.contentWindow) line.frame = { index: iframeIndex(iframe, st.frames) };
  }

  function makeLine(st, el, tag, r, cls, depth) {
    const line = { depth, ref: 0, role: "", kind: cls };
    let name;
    if (cls !== "semantic") {
      name = D.normalize(D.visibleText(el, false));
      if (!name) return null;
      if (cls === "text" && name.length > MAX_TEXT) return null;
      line.role = r && el.hasAttribute("role") ? r : D.isTextLike(el) ? "text" : r || tag;
    } else {
      name = D.accName(el, r);
      line.role = r || tag;
      if (D.isContainer(el, r)) line.container = true;
      if (tag === "iframe") line.kind = "iframe";
    }
    const minted = C.refs.assign(el, st.nextRef);
    line.ref = minted.ref;
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
    const hint = hintOf(el);
    if (hint !== undefined) line.hint = hint;
    flags(el, tag, line);
    st.lines.push(line);
    return line;
  }

  const FORM_CONTROLS = new Set(["button", "input", "select", "textarea", "option", "optgroup", "fieldset"]);

  /** Sets the §7.6 flags on `line`. */
  function flags(el, tag, line) {
    if (el.hasAttribute("disabled") || el.getAttribute("aria-disabled") === "true" ||
      (FORM_CONTROLS.has(tag) && el.matches(":disabled"))) line.disabled = true;
    const ac = el.getAttribute("aria-checked");
    if ((tag === "input" && el.indeterminate && (el.type === "checkbox")) || ac === "mixed") line.checked = "mixed";
    else if ((tag === "input" && (el.type === "checkbox" || el.type === "radio") && el.checked) || ac === "true") line.checked = true;
    if ((tag === "option" && el.selected) || el.getAttribute("aria-selected") === "true") line.selected = true;
    const ex = el.getAttribute("aria-expanded");
    if (ex !== null && TRISTATE.has(ex.toLowerCase())) line.expanded = ex.toLowerCase();
    const pr = el.getAttribute("aria-pressed");
    if (pr !== null && TRISTATE.has(pr.toLowerCase())) line.pressed = pr.toLowerCase();
    const cur = el.getAttribute("aria-current");
    if (cur !== null && cur.toLowerCase() !== "false") line.current = cur;
  }

  /** `render(result, urlOverride?)` → the §7.1/§7.6 text of a `take` result, for tests and
   *  debugging (the engine renders in Rust; this is the reference rendering). */
  function render(res, url) {
    const out = ["page: " + (D.cut(res.title || "", 80) || "(untitled)") + " \u2014 " + (D.cut(url || res.url || "", 200) || "(no url)")];
    for (const l of res.lines) out.push(renderLine(l));
    if (!res.lines.length) out.push("(no interactive elements detected)");
    if (res.truncated) out.push("\u2026 (more elements not shown: snapshot limits reached)");
    return out.join("\n");
  }

  /** The §7.6 text of one line record (no trailing newline). */
  function renderLine(l) {
    let s = "  ".repeat(l.depth);
    if (l.kind === "shadow") return s + "#shadow-root (open)";
    s += "e" + l.ref + ": " + l.role;
    if (l.container) s += " (container)";
    if (l.name) s += " " + JSON.stringify(l.name);
    if (l.level) s += " [level=" + l.level + "]";
    if (l.href !== undefined) s += " href=" + JSON.stringify(l.href);
    if (l.value !== undefined) s += " value=" + JSON.stringify(l.value);
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

  return { take, render, renderLine, frameOwner, isSecretField, isSecretWord };
})
