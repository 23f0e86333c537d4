// @ts-check
// selector: the selector grammar (docs/mcp.md#selectors) and its engines. The page side accepts the raw selector string and
// validates it itself, so Rust may forward what the caller typed.
/** @type {(C: Chromate) => ChromateSelector} */
(function (C) {
  "use strict";
  const D = C.dom;

  const PREFIXES = new Set(["css", "xpath", "id", "name", "testid", "tag", "class", "text", "text*",
    "role", "label", "placeholder", "alt", "title", "ref"]);
  const BARE_REF = /^\s*e([1-9][0-9]*)\s*$/;
  const ROLE_SHAPE = /^([A-Za-z-]+)(?:\[name=(?:"((?:[^"\\]|\\[\s\S])*)"|'((?:[^'\\]|\\[\s\S])*)'|([^\]"']*))\])?$/;
  const FORM_ROLES = new Set(["textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "switch",
    "slider", "spinbutton"]);

  /** Quotes `s` for `role=…[name="…"]` (backslash before `"` and `\`).
   *  @param {string} s */
  function quote(s) {
    return '"' + s.replace(/[\\"]/g, "\\$&") + '"';
  }

  /** `parse(selector)` → `{ok:true, engine, value, canonical, ref?, role?, name?}` or
   *  `{ok:false, error:"invalid selector", reason, browserMessage?}`. `engine` is one of the prefixes without `=`
   *  (`css` for unprefixed text); a bare `e7` parses as `{engine:"ref", ref:7, bare:true}`.
   *  @param {string} selector
   *  @returns {ParsedSelector} */
  function parse(selector) {
    if (typeof selector !== "string" || selector === "") return bad("selector is empty");
    const m = BARE_REF.exec(selector);
    if (m) {
      const ref = Number(m[1]);
      return { ok: true, engine: "ref", value: "e" + ref, ref, bare: true, canonical: "ref=e" + ref };
    }
    const eq = selector.indexOf("=");
    let engine = "css";
    let value = selector;
    if (eq > 0) {
      const prefix = selector.slice(0, eq).toLowerCase();
      if (PREFIXES.has(prefix)) { engine = prefix; value = selector.slice(eq + 1); }
    }
    switch (engine) {
      case "css": {
        try { document.createDocumentFragment().querySelector(value); } catch (e) { return bad(CSS_REASON, e.message); }
        return { ok: true, engine, value, canonical: "css=" + value };
      }
      case "xpath": {
        try { document.createExpression(value); } catch (e) { return bad(XPATH_REASON, e.message); }
        return { ok: true, engine, value, canonical: "xpath=" + value };
      }
      case "ref": {
        value = value.trim();
        const ref = C.refs.parse(value);
        if (ref === null) return bad("ref= needs e<N>, got " + JSON.stringify(value));
        return { ok: true, engine, value: "e" + ref, ref, canonical: "ref=e" + ref };
      }
      case "role": {
        value = value.trim();
        const r = ROLE_SHAPE.exec(value);
        if (!r) return bad("role= needs <role> or <role>[name=<name>], got " + JSON.stringify(value));
        const roleName = r[1].toLowerCase();
        let name = null;
        if (r[2] !== undefined) name = r[2].replace(/\\([\s\S])/g, "$1");
        else if (r[3] !== undefined) name = r[3].replace(/\\([\s\S])/g, "$1");
        else if (r[4] !== undefined) name = r[4];
        const canonical = "role=" + roleName + (name === null ? "" : "[name=" + quote(name) + "]");
        return { ok: true, engine, value, role: roleName, name, canonical };
      }
      case "tag":
        return { ok: true, engine, value: value.toLowerCase(), canonical: "tag=" + value.toLowerCase() };
      default:
        return { ok: true, engine, value, canonical: engine + "=" + value };
    }
  }

  /** chromate's reasons for selectors the browser rejects; the browser's own sentence (with its
   *  final period) travels beside them as `browserMessage`, never in the message (docs/mcp.md#errors). */
  const CSS_REASON = "not a valid CSS selector";
  const XPATH_REASON = "not a valid XPath expression";

  /** @param {string} reason
   *  @param {string} [browserMessage]
   *  @returns {ParsedSelector} */
  function bad(reason, browserMessage) {
    /** @type {ParsedSelector} */
    const res = { ok: false, error: "invalid selector", reason };
    if (typeof browserMessage === "string" && browserMessage) res.browserMessage = browserMessage;
    return res;
  }

  /** `resolve(selector, root?)` → `{ok:true, canonical, elements}` (flat-tree order) |
   *  `{ok:false, error:"invalid selector", reason, browserMessage?}` | `{ok:false, error:"stale-ref", ref,
   *  status:"detached"|"ambiguous"|"unknown"}`. `root` (an element) scopes the search to its
   *  subtree, itself included; the default is the document.
   *  @param {string | ParsedSelector} selector
   *  @param {Element | Document | null} [root]
   *  @returns {ResolvedSelector} */
  function resolve(selector, root) {
    return D.withCache(() => resolveUncached(selector, root));
  }

  /** @param {string | ParsedSelector} selector
   *  @param {Element | Document | null} [root]
   *  @returns {ResolvedSelector} */
  function resolveUncached(selector, root) {
    const p = typeof selector === "string" ? parse(selector) : selector;
    if (!p.ok) return p;
    if (p.engine === "ref") {
      const hit = C.refs.lookup(p.ref);
      if (hit.status !== "ok") return { ok: false, error: "stale-ref", ref: p.ref, status: hit.status, canonical: p.canonical };
      const inScope = !root || D.containsFlat(root, hit.element);
      return { ok: true, canonical: p.canonical, elements: inScope ? [hit.element] : [] };
    }
    let elements;
    try {
      elements = run(p, root || document);
    } catch (e) {
      return bad(p.engine === "xpath" ? XPATH_REASON : p.engine === "css" ? CSS_REASON : "the browser rejected it", e.message);
    }
    return { ok: true, canonical: p.canonical, elements };
  }

  /** `queryAll(selector, root?)` → Element[]: `resolve` without the envelope; [] on any error.
   *  @param {string | ParsedSelector} selector
   *  @param {Element | Document | null} [root] */
  function queryAll(selector, root) {
    const r = resolve(selector, root);
    return r.ok ? r.elements : [];
  }

  /** `query(selector, root?)` → the first match or null.
   *  @param {string | ParsedSelector} selector
   *  @param {Element | Document | null} [root] */
  function query(selector, root) {
    return queryAll(selector, root)[0] || null;
  }

  /** @param {ParsedSelector} p
   *  @param {Element | Document} root
   *  @returns {Element[]} */
  function run(p, root) {
    const v = p.value;
    switch (p.engine) {
      case "css": {
        const list = root.querySelectorAll(v);
        const out = [];
        if (root.nodeType === 1 && /** @type {Element} */ (root).matches(v)) out.push(/** @type {Element} */ (root));
        for (let i = 0; i < list.length; i++) out.push(list[i]);
        return out;
      }
      case "xpath": {
        const doc = root.ownerDocument || /** @type {Document} */ (root);
        const res = doc.evaluate(v, doc, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        const out = [];
        for (let i = 0; i < res.snapshotLength; i++) {
          const n = res.snapshotItem(i);
          if (n.nodeType === 1 && (root === doc || D.containsFlat(root, n))) out.push(/** @type {Element} */ (n));
        }
        return out;
      }
      case "id": return filter(root, (el) => el.getAttribute("id") === v);
      case "name": return filter(root, (el) => el.getAttribute("name") === v);
      case "testid": return filter(root, (el) => el.getAttribute("data-testid") === v);
      case "tag": return filter(root, (el) => el.localName === v);
      case "class": return filter(root, (el) => el.classList.contains(v));
      case "placeholder":
        return filter(root, (el) => (el.localName === "input" || el.localName === "textarea") && el.getAttribute("placeholder") === v);
      case "alt":
        return filter(root, (el) => (el.localName === "img" || el.localName === "area" ||
          (el.localName === "input" && /** @type {HTMLInputElement} */ (el).type === "image")) && el.getAttribute("alt") === v);
      case "title": return filter(root, (el) => el.getAttribute("title") === v);
      case "text": return textMatches(root, D.normalize(v), false);
      case "text*": return textMatches(root, D.normalize(v), true);
      case "role": return roleMatches(root, p.role, p.name === null ? null : D.normalize(p.name));
      case "label": {
        const want = v;
        return filter(root, (el) => {
          const tag = el.localName;
          const control = (tag === "input" && /** @type {HTMLInputElement} */ (el).type !== "hidden") || tag === "textarea" || tag === "select" ||
            FORM_ROLES.has(D.explicitRole(el));
          return control && D.labelCandidates(el).includes(want);
        });
      }
      default: throw new Error("unknown engine " + p.engine);
    }
  }

  /** Elements under `root` (itself included when an element) passing `pred`, flat-tree order.
   *  @param {Element | Document} root
   *  @param {(el: Element) => boolean} pred */
  function filter(root, pred) {
    /** @type {Element[]} */
    const out = [];
    if (root.nodeType === 1 && pred(/** @type {Element} */ (root))) out.push(/** @type {Element} */ (root));
    D.walk(root, /** @param {Element} el */ (el) => { if (pred(el)) out.push(el); });
    return out;
  }

  const TEXT_SKIP = new Set(["head", "script", "style", "template", "noscript", "title"]);

  /** `text=`/`text*=`: elements whose normalised text equals (contains) `want`, innermost only.
   *  @param {Element | Document} root
   *  @param {string} want
   *  @param {boolean} substring */
  function textMatches(root, want, substring) {
    /** @type {Element[]} */
    const out = [];
    // For equality, text longer than `want` can never match, nor can its ancestors' (text only
    // grows): such text is carried as null instead of being concatenated all the way up.
    const cap = substring ? Infinity : want.length + 2;
    // Post-order over the flat tree: each call returns [text|null, anyDescendantMatched] and
    // pushes matches into `out` after their descendants' (none, for a match: innermost only), so
    // results stay in flat-tree order.
    /** @param {Element} el
     *  @returns {[string | null, boolean]} */
    function visit(el) {
      // Their content is not text (docs/mcp.md#selectors): nothing in them matches, nor adds to an ancestor's text.
      if (TEXT_SKIP.has(el.localName) || el.localName === "textarea" || el.localName === "select") return ["", false];
      /** @type {string | null} */
      let s = "";
      let below = false;
      // Flat-tree children as a sibling chain (or the slot's assigned nodes): no live NodeList.
      const sr = el.shadowRoot;
      const arr = !sr && el.localName === "slot" && D.isShadowSlot(el) ? /** @type {HTMLSlotElement} */ (el).assignedNodes({ flatten: true }) : null;
      /** @type {Node | null} */
      let next = arr ? null : sr ? sr.firstChild : el.firstChild;
      for (let i = 0; ; ) {
        const n = arr ? arr[i++] : next;
        if (!n) break;
        if (!arr) next = n.nextSibling;
        if (n.nodeType === 3) { if (s !== null) s += /** @type {Text} */ (n).data; }
        else if (n.nodeType === 1) {
          const r = visit(/** @type {Element} */ (n));
          s = s === null || r[0] === null ? null : s + r[0];
          below = below || r[1];
        }
        if (s !== null && s.length > cap) {
          s = s.replace(/[\s\u00a0]+/g, " ");
          if (s.length > cap) s = null;
        }
      }
      if (el.localName === "slot" && D.isShadowSlot(el)) return [s, below];
      if (!below && s !== null) {
        const t = D.normalize(s);
        if (substring ? t.includes(want) : t === want) { out.push(el); return [s, true]; }
      }
      return [s, below];
    }
    if (root.nodeType === 9) { if (/** @type {Document} */ (root).documentElement) visit(/** @type {Document} */ (root).documentElement); }
    else visit(/** @type {Element} */ (root));
    return out;
  }

  /** The role `role=` matches: the snapshot's (docs/mcp.md#snapshots; a password field is a
   *  textbox there, as Chrome and Playwright's role engine call it).
   *  @param {Element} el
   *  @returns {string | null} */
  function selectorRole(el) {
    return D.role(el);
  }

  /** `role=`: role per `selectorRole` and, when given, normalised accessible name; never under a hidden,
   *  inert or aria-hidden ancestor-or-self.
   *  @param {Element | Document} root
   *  @param {string} wantRole
   *  @param {string | null} wantName */
  function roleMatches(root, wantRole, wantName) {
    /** @type {Element[]} */
    const out = [];
    const test = /** @param {Element} el */ (el) => {
      if (D.attrHidden(el)) return false;
      if (selectorRole(el) === wantRole && (wantName === null || D.accName(el) === wantName)) out.push(el);
      return true;
    };
    if (root.nodeType === 1) {
      if (D.underHidden(/** @type {Element} */ (root))) return out;
      test(/** @type {Element} */ (root));
    }
    D.walk(root, test);
    return out;
  }

  return { parse, resolve, queryAll, query, quote };
})
