// @ts-check
// dom: flat-tree traversal, text, the element-state predicates (docs/mcp.md#selectors), implicit ARIA roles and
// accessible names. Shared by every other module, so `role=` selectors and
// snapshots agree by construction.
/** @type {(C: Chromate) => ChromateDom} */
(function (C) {
  "use strict";

  const ELEMENT = 1;
  const TEXT = 3;
  const FRAGMENT = 11;

  /** Options for `checkVisibility`: display, visibility and opacity all count (docs/mcp.md#actionability). */
  const VIS_OPTS = { opacityProperty: true, visibilityProperty: true };

  /** Tags whose content never counts as element text (docs/mcp.md#selectors). */
  const NO_TEXT = new Set(["script", "style", "template", "textarea", "select", "noscript"]);

  /** Every concrete ARIA 1.2 role (plus graphics roles), for "first known token" (docs/mcp.md#snapshots). */
  const ARIA_ROLES = new Set(("alert alertdialog application article banner blockquote button caption cell " +
    "checkbox code columnheader combobox comment complementary contentinfo definition deletion dialog " +
    "directory document emphasis feed figure form generic grid gridcell group heading img image insertion " +
    "link list listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox " +
    "menuitemradio meter navigation none note option paragraph presentation progressbar radio radiogroup " +
    "region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong " +
    "subscript suggestion superscript switch tab table tablist tabpanel term textbox time timer toolbar " +
    "tooltip tree treegrid treeitem graphics-document graphics-object graphics-symbol").split(" "));

  /** Roles whose accessible name may come from their own content (ARIA "name from content"). */
  const NAME_FROM_CONTENT = new Set(["button", "cell", "checkbox", "columnheader", "gridcell", "heading",
    "link", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "rowheader", "switch",
    "tab", "tooltip", "treeitem"]);

  /** Roles that print `(container)` and are named only from explicit labels (docs/mcp.md#snapshots). */
  const CONTAINER_ROLES = new Set(["main", "navigation", "form", "search", "region", "article", "banner",
    "contentinfo", "complementary", "dialog", "alertdialog", "group", "list", "table", "row", "feed"]);

  /** Tags that end the banner/contentinfo scope of `header`/`footer` (ARIA in HTML). */
  const SECTIONING = new Set(["article", "aside", "main", "nav", "section"]);
  const SECTIONING_ROLES = new Set(["article", "complementary", "main", "navigation", "region"]);

  /** Input types a person types text into: the ones a code editor or a custom widget may hide
   *  behind a transparent or tiny field (`isTypeable`). */
  const TEXT_ENTRY_TYPES = new Set(["text", "search", "email", "url", "tel", "password", "number"]);

  /** Private-use characters: icon-font glyphs. Chrome leaves them out of accessible names. */
  const PRIVATE_USE = /[\ue000-\uf8ff]|[\udb80-\udbff][\udc00-\udfff]/g;

  /** Input types a person can type into (fillable, docs/mcp.md#selectors). */
  const FILLABLE_TYPES = new Set(["text", "search", "email", "url", "tel", "password", "number", "date",
    "time", "datetime-local", "month", "week", "color", "range"]);

  /** Role of a text-like input, `list` attribute aside. @type {Record<string, string>} */
  const INPUT_ROLES = {
    button: "button", image: "button", reset: "button", submit: "button", checkbox: "checkbox",
    radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", email: "textbox",
    tel: "textbox", text: "textbox", url: "textbox",
    // Not in ARIA in HTML, but what Chrome's accessibility tree and Playwright's role engine
    // call it (issue 28): a password field is a textbox to the snapshot and to `role=`.
    password: "textbox",
  };

  /** Implicit roles by tag (ARIA in HTML); tags needing context are handled in `implicitRole`.
   *  No prototype: a page's `<constructor>` element must not find `Object.prototype.constructor`.
   *  @type {Record<string, string>} */
  const TAG_ROLES = Object.assign(Object.create(null), {
    article: "article", aside: "complementary", blockquote: "blockquote", button: "button",
    caption: "caption", code: "code", datalist: "listbox", dd: "definition", del: "deletion",
    details: "group", dfn: "term", dialog: "dialog", dt: "term", em: "emphasis", fieldset: "group",
    figure: "figure", form: "form", h1: "heading", h2: "heading", h3: "heading", h4: "heading",
    h5: "heading", h6: "heading", hgroup: "group", hr: "separator", ins: "insertion", li: "listitem",
    main: "main", mark: "mark", math: "math", menu: "list", meter: "meter", nav: "navigation",
    ol: "list", optgroup: "group", option: "option", output: "status", p: "paragraph",
    progress: "progressbar", search: "search", strong: "strong", sub: "subscript", summary: "button",
    sup: "superscript", table: "table", tbody: "rowgroup", textarea: "textbox", tfoot: "rowgroup",
    thead: "rowgroup", time: "time", tr: "row", ul: "list", address: "group",
  });

  /** Normalise whitespace: runs (no-break space included) become one space; trimmed (docs/mcp.md#selectors).
   *  @param {string | null | undefined} s */
  function normalize(s) {
    return s ? s.replace(/[\s\u00a0]+/g, " ").trim() : "";
  }

  /** Cut `s` to at most `n` code points: `n - 1` of them plus `…` when longer (docs/mcp.md#snapshots).
   *  @param {string} s
   *  @param {number} n */
  function cut(s, n) {
    if (s.length <= n) return s;
    const cps = Array.from(s);
    return cps.length <= n ? s : cps.slice(0, n - 1).join("") + "\u2026";
  }

  /** The flat-tree children of `node` (docs/mcp.md#snapshots): open shadow roots replace the host's children; a
   *  `<slot>` in a shadow tree yields its assigned nodes, nested slots flattened, else its fallback.
   *  Closed roots are never entered (`shadowRoot` is null for them).
   *  @param {Node} node
   *  @returns {ArrayLike<Node>} */
  function children(node) {
    if (node.nodeType === ELEMENT) {
      const sr = /** @type {Element} */ (node).shadowRoot;
      if (sr) return sr.childNodes;
      if (/** @type {Element} */ (node).localName === "slot") {
        const root = /** @type {ShadowRoot} */ (node.getRootNode());
        if (root.nodeType === FRAGMENT && root.host) return /** @type {HTMLSlotElement} */ (node).assignedNodes({ flatten: true });
      }
    }
    return node.childNodes;
  }

  /** The flat-tree parent of `node`, or null: its assigned slot, else the shadow host for a
   *  shadow root's child, else the DOM parent.
   *  @param {Node} node
   *  @returns {Node | null} */
  function parent(node) {
    const slot = /** @type {Element} */ (node).assignedSlot;
    if (slot) return slot;
    const p = node.parentNode;
    if (p && p.nodeType === FRAGMENT && /** @type {ShadowRoot} */ (p).host) return /** @type {ShadowRoot} */ (p).host;
    return p;
  }

  /** Whether `a` is `b` or a flat-tree ancestor of `b` (crossing open shadow roots).
   *  @param {Node} a
   *  @param {Node} b */
  function containsFlat(a, b) {
    for (let n = b; n; n = parent(n)) if (n === a) return true;
    return false;
  }

  /** Calls `visit(el)` for every element under `root` (exclusive) in flat-tree order; a `false`
   *  result prunes that element's subtree. Slots in shadow trees are transparent.
   *  @param {Element | Document | DocumentFragment} root
   *  @param {(el: Element) => boolean | void} visit */
  function walk(root, visit) {
    const sr = root.nodeType === ELEMENT ? /** @type {Element} */ (root).shadowRoot : null;
    if (!sr && root.nodeType === ELEMENT && /** @type {Element} */ (root).localName === "slot" && isShadowSlot(/** @type {Element} */ (root))) {
      const kids = /** @type {HTMLSlotElement} */ (root).assignedNodes({ flatten: true });
      for (let i = 0; i < kids.length; i++) if (kids[i].nodeType === ELEMENT) walkOne(/** @type {Element} */ (kids[i]), visit);
      return;
    }
    // Sibling chains rather than live NodeLists: much cheaper on big pages.
    for (let n = (sr || root).firstElementChild; n; n = n.nextElementSibling) walkOne(n, visit);
  }

  /** @param {Element} n
   *  @param {(el: Element) => boolean | void} visit */
  function walkOne(n, visit) {
    if (n.localName === "slot" && isShadowSlot(n)) walk(n, visit);
    else if (visit(n) !== false) walk(n, visit);
  }

  /** Whether a `<slot>` lives in a shadow tree (and so is replaced by what it renders).
   *  @param {Element} el */
  function isShadowSlot(el) {
    const root = /** @type {ShadowRoot} */ (el.getRootNode());
    return root.nodeType === FRAGMENT && !!root.host;
  }

  /** Whether `el` carries `hidden`, `inert` or `aria-hidden="true"` itself (docs/mcp.md#snapshots).
   *  @param {Element} el */
  function attrHidden(el) {
    return el.hasAttribute("hidden") || el.hasAttribute("inert") || el.getAttribute("aria-hidden") === "true";
  }

  /** Whether a flat-tree ancestor-or-self carries `hidden`, `inert` or `aria-hidden="true"`.
   *  @param {Element} el */
  function underHidden(el) {
    for (let n = el; n && n.nodeType === ELEMENT; n = /** @type {Element} */ (parent(n))) if (attrHidden(n)) return true;
    return false;
  }

  /** `styleOf(el)` → CSSStyleDeclaration: computed style from `el`'s own window (frames too).
   *  @param {Element} el */
  function styleOf(el) {
    return el.ownerDocument.defaultView.getComputedStyle(el);
  }

  /** Visible (docs/mcp.md#actionability): connected, rendered (no `display:none` on a flat-tree ancestor-or-self),
   *  `visibility: visible`, no ancestor-or-self with opacity 0, non-zero border box;
   *  `display: contents` counts as visible when any child is. Viewport position is irrelevant.
   *  @param {Element} el
   *  @returns {boolean} */
  function isVisible(el) {
    if (!el.isConnected) return false;
    if (el.checkVisibility(VIS_OPTS)) {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    }
    const cs = styleOf(el);
    if (cs.display !== "contents") return false;
    const kids = children(el);
    for (let i = 0; i < kids.length; i++) {
      const n = kids[i];
      if (n.nodeType === ELEMENT && isVisible(/** @type {Element} */ (n))) return true;
      if (n.nodeType === TEXT && /** @type {Text} */ (n).data.trim() && cs.visibility === "visible") {
        const range = el.ownerDocument.createRange();
        range.selectNodeContents(n);
        const r = range.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) return true;
      }
    }
    return false;
  }

  /** How many descendants `isReachableZeroSize` looks at for a box of the content. */
  const CONTENT_BOX_LOOKS = 32;

  /** Whether `el` is rendered and seen (display, visibility, opacity) with a zero-size border
   *  box, yet a person can reach it (docs/mcp.md#snapshots): it is in the tab order (enabled,
   *  `tabIndex` ≥ 0: a keyboard gets there), or its content has a box after layout (an icon
   *  overflowing a zero-width button: Swagger UI's copy buttons). Chrome lists such controls,
   *  whatever their size. A zero-size element out of the tab order with no box inside is not.
   *  @param {Element} el */
  function isReachableZeroSize(el) {
    if (!el.isConnected || !el.checkVisibility(VIS_OPTS)) return false;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) return false;
    if (/** @type {HTMLElement} */ (el).tabIndex >= 0 && !el.matches(":disabled")) return true;
    let looks = 0;
    const stack = [el];
    while (stack.length && looks < CONTENT_BOX_LOOKS) {
      const kids = children(stack.pop());
      for (let i = 0; i < kids.length && looks < CONTENT_BOX_LOOKS; i++) {
        const n = kids[i];
        let box = null;
        if (n.nodeType === ELEMENT) {
          looks++;
          if (!/** @type {Element} */ (n).checkVisibility(VIS_OPTS)) continue;
          box = /** @type {Element} */ (n).getBoundingClientRect();
          stack.push(/** @type {Element} */ (n));
        } else if (n.nodeType === TEXT && /** @type {Text} */ (n).data.trim()) {
          looks++;
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(n);
          box = range.getBoundingClientRect();
        }
        if (box && box.width > 0 && box.height > 0) return true;
      }
    }
    return false;
  }

  /** Snapshot-visible (docs/mcp.md#snapshots): visible and no flat-tree ancestor-or-self with `hidden`, `inert` or
   *  `aria-hidden="true"`.
   *  @param {Element} el */
  function isSnapshotVisible(el) {
    return !underHidden(el) && isVisible(el);
  }

  /** Whether `el` is a text field a person can type into, seen or not: a textarea, text-entry
   *  input or editing host that is editable (enabled, not read-only), has a layout box
   *  (`getClientRects()`), is `visibility: visible` under no `display: none` or
   *  `content-visibility: hidden` ancestor, and is not inert; opacity and size do not matter.
   *  This is how code editors take keyboard input (Ace's `textarea.ace_text-input` at opacity 0
   *  and 1px, CodeMirror 5's textarea in a zero-height box, Monaco's `textarea.inputarea`), and
   *  Chrome exposes such a field as a textbox: snapshots list it (docs/mcp.md#snapshots) and actions take it as
   *  visible.
   *  @param {Element} el */
  function isTypeable(el) {
    const tag = el.localName;
    if (tag === "input") { if (!TEXT_ENTRY_TYPES.has(/** @type {HTMLInputElement} */ (el).type)) return false; }
    else if (tag !== "textarea" && !(/** @type {HTMLElement} */ (el).isContentEditable && isEditingHost(el))) return false;
    if (!el.isConnected || !isEditable(el) || el.getClientRects().length === 0) return false;
    if (!el.checkVisibility({ visibilityProperty: true })) return false;
    for (let n = el; n && n.nodeType === ELEMENT; n = /** @type {Element} */ (parent(n))) if (n.hasAttribute("inert")) return false;
    return true;
  }

  /** Enabled (docs/mcp.md#actionability): not `:disabled` (disabled fieldsets included) and no `aria-disabled="true"`.
   *  @param {Element} el */
  function isEnabled(el) {
    return !el.matches(":disabled") && el.getAttribute("aria-disabled") !== "true";
  }

  /** Fillable (docs/mcp.md#actionability): textarea, contenteditable, or an input of a typeable type.
   *  @param {Element} el */
  function isFillable(el) {
    const tag = el.localName;
    if (tag === "textarea") return true;
    if (tag === "input") return FILLABLE_TYPES.has(/** @type {HTMLInputElement} */ (el).type);
    return !!(/** @type {HTMLElement} */ (el).isContentEditable);
  }

  /** Editable (docs/mcp.md#actionability): enabled, not read-only (`readonly`, `aria-readonly="true"`) and fillable.
   *  @param {Element} el */
  function isEditable(el) {
    if (!isFillable(el) || !isEnabled(el)) return false;
    if ((el.localName === "input" || el.localName === "textarea") && /** @type {HTMLInputElement} */ (el).readOnly) return false;
    return el.getAttribute("aria-readonly") !== "true";
  }

  /** Whether `el` is a contenteditable host: editable itself, its parent not.
   *  @param {Element} el */
  function isEditingHost(el) {
    const v = el.getAttribute("contenteditable");
    if (v === null || v.toLowerCase() === "false") return false;
    const p = parent(el);
    return !(p && p.nodeType === ELEMENT && /** @type {HTMLElement} */ (p).isContentEditable);
  }

  /** Element text (docs/mcp.md#selectors): descendant text nodes in flat-tree order, minus script, style, template,
   *  textarea and select content; CSS-hidden text counts. Not normalised.
   *  @param {Element} el
   *  @returns {string} */
  function text(el) {
    if (NO_TEXT.has(el.localName)) return "";
    let s = "";
    const kids = children(el);
    for (let i = 0; i < kids.length; i++) {
      const n = kids[i];
      if (n.nodeType === TEXT) s += /** @type {Text} */ (n).data;
      else if (n.nodeType === ELEMENT) s += text(/** @type {Element} */ (n));
    }
    return s;
  }

  /** Snapshot-visible text of `el` (for text-class elements, docs/mcp.md#snapshots): text of descendants that are
   *  rendered, visible and not under `hidden`/`inert`/`aria-hidden`, with the text CSS generates
   *  in `::before`/`::after` (`pseudoText`); private-use characters (icon-font glyphs) are left
   *  out, as Chrome leaves them out of names. With `fromContent`, ARIA name-from-content extras
   *  apply: a descendant's `aria-labelledby` text or `aria-label` stands in for it, and an
   *  image for its `alt` (when it has the attribute, even empty) or else its `title`.
   *  Not normalised.
   *  @param {Element} el
   *  @param {boolean} [fromContent] */
  function visibleText(el, fromContent) {
    return collectText(el, true, !!fromContent, el).replace(PRIVATE_USE, "");
  }

  /** @param {Element} el
   *  @param {boolean} own
   *  @param {boolean} fromContent
   *  @param {Element} top
   *  @returns {string} */
  function collectText(el, own, fromContent, top) {
    // Reading a pseudo-element's computed style is the walk's dearest call; most pages have no
    // rule that could give one content, so it is read only where a rule could.
    const pseudo = own && (el.localName === "q" || pseudoRulesReach(el));
    let s = pseudo ? pseudoText(el, "::before") : "";
    const kids = children(el);
    /** @type {string | undefined} */
    let transform;
    for (let i = 0; i < kids.length; i++) {
      const n = kids[i];
      if (n.nodeType === TEXT) {
        if (!own) continue;
        const data = /** @type {Text} */ (n).data;
        // Read once per element, and only for text with letters in it.
        if (transform === undefined && LETTER.test(data)) transform = styleOf(el).textTransform;
        s += transform ? transformed(data, transform) : data;
        continue;
      }
      if (n.nodeType !== ELEMENT) continue;
      const e = /** @type {Element} */ (n);
      const tag = e.localName;
      if (NO_TEXT.has(tag) || attrHidden(e)) continue;
      let vis = own;
      if (!e.checkVisibility(VIS_OPTS)) {
        const cs = styleOf(e);
        if (cs.display === "none" || cs.opacity === "0") continue;
        vis = cs.display === "contents" ? own && cs.visibility === "visible" : false;
      }
      if (fromContent && vis) {
        const lb = e.hasAttribute("aria-labelledby") ? normalize(labelledByText(e)) : "";
        if (lb) { s += " " + lb + " "; continue; }
        const label = e.getAttribute("aria-label");
        if (label && label.trim()) { s += " " + label + " "; continue; }
        if (tag === "img" || tag === "area" || (tag === "input" && /** @type {HTMLInputElement} */ (e).type === "image")) {
          const alt = e.getAttribute("alt");
          s += " " + (alt !== null ? alt : e.getAttribute("title") || "") + " ";
          continue;
        }
      }
      if (tag === "br") { if (vis) s += "\n"; continue; }
      let inner = collectText(e, vis, fromContent, top);
      // A control named only by its `title` (an icon button in a heading) gives that name,
      // as Chrome computes the name from content; a generic element's title gives nothing.
      if (fromContent && vis && e.hasAttribute("title") && NAME_FROM_CONTENT.has(role(e)) &&
        !normalize(inner.replace(PRIVATE_USE, ""))) inner = e.getAttribute("title") || "";
      // Name from content separates the text of non-inline boxes, as browsers do.
      if (fromContent && vis && styleOf(e).display !== "inline") s += " " + inner + " ";
      else s += inner;
    }
    if (pseudo) s += pseudoText(el, "::after");
    return s;
  }

  /** A letter in any script. */
  const LETTER = /\p{L}/u;

  /** `data` as CSS `text-transform: transform` renders it, as Chrome puts rendered text in
   *  names: `uppercase`, `lowercase`, or `capitalize` (the first letter of each word; a word
   *  that a previous text node began is capitalized again, where Chrome would not).
   *  @param {string} data
   *  @param {string} transform */
  function transformed(data, transform) {
    if (transform === "uppercase") return data.toUpperCase();
    if (transform === "lowercase") return data.toLowerCase();
    if (transform === "capitalize") {
      return data.replace(/(^|[^\p{L}\p{N}'\u2019])(\p{L})/gu, (_, before, letter) => before + letter.toUpperCase());
    }
    return data;
  }

  /** The text the `::before` or `::after` pseudo-element (`which`) of `el` renders, as Chrome
   *  puts it in names (accname 2F.ii): the `content` strings, `attr()` values and quotes, or
   *  the alternative text after `/` if there is one; images and counters add nothing (Chrome
   *  leaves counter values out of names too). "" when the pseudo-element is not rendered
   *  (`content: none | normal`, `display: none`, not `visibility: visible`); a block box's text
   *  is set apart by spaces.
   *  @param {Element} el
   *  @param {"::before" | "::after"} which */
  function pseudoText(el, which) {
    const cs = el.ownerDocument.defaultView.getComputedStyle(el, which);
    const content = cs.content;
    if (!content || content === "none" || content === "normal") return "";
    if (cs.display === "none" || cs.visibility !== "visible") return "";
    const t = contentText(content, el, cs);
    return t && cs.display !== "inline" ? " " + t + " " : t;
  }

  /** A selector naming `::before` or `::after` (or their one-colon forms). */
  const PSEUDO_SELECTOR = /:(?::)?(?:before|after)\b/i;
  /** Per tree root, until the current task ends: whether its style sheets may give an element
   *  `::before`/`::after` content (see `pseudoRulesReach`).
   *  @type {Map<Node, boolean> | null} */
  let pseudoRoots = null;

  /** Whether any style rule that applies to `el` could give it a `::before` or `::after`: a
   *  selector naming one in the style sheets (and adopted sheets) of its tree's root and, for a
   *  shadow tree, of every root above it (`::part(x)::before`); of its own shadow root
   *  (`:host::before`); and of the tree of the slot it is assigned to (`::slotted(x)::before`).
   *  A sheet that cannot be read (another origin's) counts as one that could. The browser's own
   *  sheet gives them only to `q`, whose pseudo-elements `collectText` always reads. Known per
   *  root until the current task ends, so a walk reads each sheet once and the next call sees
   *  sheets added since.
   *  @param {Element} el */
  function pseudoRulesReach(el) {
    if (pseudoRoots === null) {
      pseudoRoots = new Map();
      queueMicrotask(() => { pseudoRoots = null; });
    }
    if (el.shadowRoot && rootGenerates(el.shadowRoot)) return true;
    const slot = el.assignedSlot;
    if (slot && treeGenerates(slot.getRootNode())) return true;
    return treeGenerates(el.getRootNode());
  }

  /** `root` or a root above it (through shadow hosts) may generate: see `pseudoRulesReach`.
   *  @param {Node} root */
  function treeGenerates(root) {
    for (;;) {
      if (rootGenerates(root)) return true;
      const host = /** @type {ShadowRoot} */ (root).host;
      if (!host) return false;
      root = host.getRootNode();
    }
  }

  /** @param {Node} root */
  function rootGenerates(root) {
    const roots = /** @type {Map<Node, boolean>} */ (pseudoRoots);
    let known = roots.get(root);
    if (known === undefined) {
      known = rootMayGenerate(/** @type {Document | ShadowRoot} */ (root));
      roots.set(root, known);
    }
    return known;
  }

  /** @param {Document | ShadowRoot} root */
  function rootMayGenerate(root) {
    const sheets = root.styleSheets;
    if (sheets) for (let i = 0; i < sheets.length; i++) if (sheetMayGenerate(sheets[i])) return true;
    const adopted = root.adoptedStyleSheets;
    if (adopted) for (let i = 0; i < adopted.length; i++) if (sheetMayGenerate(adopted[i])) return true;
    return false;
  }

  /** @param {CSSStyleSheet} sheet */
  function sheetMayGenerate(sheet) {
    /** @type {CSSRuleList} */
    let rules;
    try {
      rules = sheet.cssRules;
    } catch (e) {
      return true;
    }
    return !rules || rulesMayGenerate(rules);
  }

  /** Style rules, nested ones (grouping rules, CSS nesting) and imported sheets included.
   *  @param {CSSRuleList} rules
   *  @returns {boolean} */
  function rulesMayGenerate(rules) {
    for (let i = 0; i < rules.length; i++) {
      const rule = /** @type {CSSRule & {selectorText?: string, styleSheet?: CSSStyleSheet | null, cssRules?: CSSRuleList}} */ (rules[i]);
      if (rule.selectorText && PSEUDO_SELECTOR.test(rule.selectorText)) return true;
      if (rule.styleSheet && sheetMayGenerate(rule.styleSheet)) return true;
      if (rule.cssRules && rulesMayGenerate(rule.cssRules)) return true;
    }
    return false;
  }

  /** The text of a computed `content` value (`"[" attr(title) "]" / "alt"`): see `pseudoText`.
   *  @param {string} value
   *  @param {Element} el
   *  @param {CSSStyleDeclaration} cs */
  function contentText(value, el, cs) {
    let out = "";
    /** @type {string | null} */
    let alt = null;
    let i = 0;
    const add = (/** @type {string} */ t) => { if (alt === null) out += t; else alt += t; };
    while (i < value.length) {
      const c = value[i];
      if (c === '"' || c === "'") {
        const str = cssString(value, i);
        add(str.text);
        i = str.end;
        continue;
      }
      if (c === "/") { alt = ""; i++; continue; }
      let j = i;
      while (j < value.length && /[\w-]/.test(value[j])) j++;
      if (j === i) { i++; continue; }
      const word = value.slice(i, j).toLowerCase();
      if (value[j] === "(") {
        const end = closeParen(value, j);
        if (word === "attr") {
          const m = /^\s*([\w-]+)/.exec(value.slice(j + 1, end));
          const v = m ? el.getAttribute(m[1]) : null;
          if (v !== null) add(v);
        }
        i = end + 1;
        continue;
      }
      if (word === "open-quote" || word === "close-quote") add(quoteOf(cs, word === "open-quote"));
      i = j;
    }
    return alt !== null ? alt : out;
  }

  /** The CSS string starting at `value[i]` (a quote), escapes decoded: `{text, end}`, `end`
   *  just past the closing quote.
   *  @param {string} value
   *  @param {number} i */
  function cssString(value, i) {
    const quote = value[i];
    let text = "";
    let j = i + 1;
    while (j < value.length && value[j] !== quote) {
      if (value[j] !== "\\") { text += value[j++]; continue; }
      j++;
      let hex = "";
      while (hex.length < 6 && j < value.length && /[0-9a-fA-F]/.test(value[j])) hex += value[j++];
      if (hex) {
        const cp = parseInt(hex, 16);
        text += String.fromCodePoint(cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? cp : 0xfffd);
        if (value[j] === " " || value[j] === "\t" || value[j] === "\n") j++;
      } else if (j < value.length) {
        if (value[j] !== "\n") text += value[j];
        j++;
      }
    }
    return { text, end: j + 1 };
  }

  /** Index of the `)` closing the `(` at `value[open]`, strings skipped; the end if none.
   *  @param {string} value
   *  @param {number} open */
  function closeParen(value, open) {
    let depth = 0;
    for (let j = open; j < value.length; j++) {
      const c = value[j];
      if (c === '"' || c === "'") { j = cssString(value, j).end - 1; continue; }
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return j;
    }
    return value.length;
  }

  /** The outermost opening or closing quote of a pseudo-element's computed `quotes`.
   *  @param {CSSStyleDeclaration} cs
   *  @param {boolean} opening */
  function quoteOf(cs, opening) {
    const q = cs.quotes;
    if (q && q !== "auto" && q !== "none") {
      const list = [];
      for (let i = 0; i < q.length; i++) {
        if (q[i] === '"' || q[i] === "'") { const str = cssString(q, i); list.push(str.text); i = str.end - 1; }
      }
      if (list.length >= 2) return opening ? list[0] : list[1];
    }
    if (q === "none") return "";
    return opening ? "\u201c" : "\u201d";
  }

  /** Rendered text of `el` (`innerText`), as browser_read and browser_expect see it.
   *  @param {Element} el */
  function renderedText(el) {
    return /** @type {HTMLElement} */ (el).innerText !== undefined ? /** @type {HTMLElement} */ (el).innerText : el.textContent || "";
  }

  /** The first known ARIA token of the `role` attribute, or null (docs/mcp.md#snapshots).
   *  @param {Element} el */
  function explicitRole(el) {
    const attr = el.getAttribute("role");
    if (!attr) return null;
    const tokens = attr.trim().toLowerCase().split(/\s+/);
    for (const t of tokens) if (ARIA_ROLES.has(t)) return t === "image" ? "img" : t;
    return null;
  }

  /** Implicit ARIA role of `el` (ARIA in HTML, plus summary → button and contenteditable hosts →
   *  textbox, a password input a textbox as in Chrome; header/footer scoped; date, file and color inputs have none). `generic`
   *  comes back as null so that callers print the tag name.
   *  @param {Element} el
   *  @returns {string | null} */
  function implicitRole(el) {
    const tag = el.localName;
    switch (tag) {
      case "a": return el.hasAttribute("href") || isScriptedAnchor(el) ? "link" : null;
      case "area": return el.hasAttribute("href") ? "link" : null;
      case "input": {
        const type = /** @type {HTMLInputElement} */ (el).type;
        if (el.hasAttribute("list") && ["email", "search", "tel", "text", "url"].includes(type)) return "combobox";
        return INPUT_ROLES[type] || null;
      }
      case "select": return /** @type {HTMLSelectElement} */ (el).multiple || /** @type {HTMLSelectElement} */ (el).size > 1 ? "listbox" : "combobox";
      case "img": {
        const alt = el.getAttribute("alt");
        return alt === "" && !el.hasAttribute("title") && !el.hasAttribute("aria-label") ? "presentation" : "img";
      }
      case "section": return hasExplicitName(el) ? "region" : null;
      case "header": case "footer": return inSectioning(el) ? null : tag === "header" ? "banner" : "contentinfo";
      case "td": return inGrid(el) ? "gridcell" : "cell";
      case "th": {
        const scope = (el.getAttribute("scope") || "").toLowerCase();
        if (scope === "row" || scope === "rowgroup") return "rowheader";
        return "columnheader";
      }
      default: {
        const r = TAG_ROLES[tag];
        if (r) return r;
        return isEditingHost(el) ? "textbox" : null;
      }
    }
  }

  /** Whether an `<a>` without `href` is made a control: focusable (`tabindex`), with an
   *  `onclick` attribute, or showing the pointing-hand cursor a person reads as "click me".
   *  Chrome makes such an anchor a link when it has a click listener (otherwise it is generic);
   *  listeners added with `addEventListener` cannot be seen from chromate's world, a focusable
   *  anchor is made so to be activated, and a page styles `cursor: pointer` on what it handles
   *  clicks on (mdBook's fold chevrons of the page's own headings).
   *  @param {Element} el */
  function isScriptedAnchor(el) {
    return el.hasAttribute("tabindex") || el.hasAttribute("onclick") || styleOf(el).cursor === "pointer";
  }

  /** @param {Element} el */
  function hasExplicitName(el) {
    const l = el.getAttribute("aria-label");
    if (l && l.trim()) return true;
    return !!normalize(labelledByText(el));
  }

  /** @param {Element} el */
  function inSectioning(el) {
    for (let n = /** @type {Element} */ (parent(el)); n && n.nodeType === ELEMENT; n = /** @type {Element} */ (parent(n))) {
      if (SECTIONING.has(n.localName)) return true;
      const r = explicitRole(n);
      if (r && SECTIONING_ROLES.has(r)) return true;
    }
    return false;
  }

  /** @param {Element} el */
  function inGrid(el) {
    const table = el.closest("table");
    if (!table) return false;
    const r = explicitRole(table);
    return r === "grid" || r === "treegrid";
  }

  /** Role of `el` (docs/mcp.md#snapshots): the first known ARIA token of `role`, else the implicit role, else null.
   *  @param {Element} el */
  function role(el) {
    return explicitRole(el) || implicitRole(el);
  }

  /** Whether `role` (as returned by `role`) or the tag makes `el` a container (docs/mcp.md#snapshots).
   *  @param {Element} el
   *  @param {string | null} r */
  function isContainer(el, r) {
    return CONTAINER_ROLES.has(r) || (r === null && el.localName === "section");
  }

  /** Concatenated text of the elements named by `aria-labelledby` (in `el`'s tree), or "".
   *  @param {Element} el */
  function labelledByText(el) {
    const ids = el.getAttribute("aria-labelledby");
    if (!ids) return "";
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const parts = [];
    for (const id of ids.trim().split(/\s+/)) {
      const ref = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
      if (!ref) continue;
      const label = ref.getAttribute("aria-label");
      parts.push(label && label.trim() ? label : text(ref));
    }
    return parts.join(" ");
  }

  /** Per-call cache: tree root → Map(control → labels). Live `el.labels` lists are rebuilt by
   *  walking the whole tree after any DOM change, once per control, which makes a snapshot of a
   *  big page quadratic; one `querySelectorAll("label")` per root and call is linear. */
  /** @type {Map<Node, Map<Element, HTMLLabelElement[]>> | null} */
  let labelCache = null;
  const LABELABLE = new Set(["button", "input", "meter", "output", "progress", "select", "textarea"]);

  /** `withCache(fn)` → `fn()`, with per-call caches on while it runs (never across calls, since
   *  the page may change in between).
   *  @template T
   *  @param {() => T} fn
   *  @returns {T} */
  function withCache(fn) {
    if (labelCache) return fn();
    labelCache = new Map();
    try { return fn(); } finally { labelCache = null; }
  }

  /** The `<label>` elements of `el` (for= and nesting), as `el.labels`.
   *  @param {Element} el
   *  @returns {ArrayLike<HTMLLabelElement>} */
  function labelsOf(el) {
    if (!LABELABLE.has(el.localName)) return [];
    if (!labelCache) return /** @type {HTMLInputElement} */ (el).labels;
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    let map = labelCache.get(root);
    if (!map) {
      map = new Map();
      /** @type {ArrayLike<HTMLLabelElement>} */
      const all = root.querySelectorAll ? root.querySelectorAll("label") : [];
      for (let i = 0; i < all.length; i++) {
        const c = all[i].control;
        if (!c) continue;
        const list = map.get(c);
        if (list) list.push(all[i]); else map.set(c, [all[i]]);
      }
      labelCache.set(root, map);
    }
    return map.get(el) || [];
  }

  /** Texts of the `<label>` elements of `el` (for= and nesting), each not normalised.
   *  @param {Element} el */
  function labelTexts(el) {
    const labels = labelsOf(el);
    if (!labels || !labels.length) return [];
    const out = [];
    for (let i = 0; i < labels.length; i++) out.push(visibleText(labels[i], true));
    return out;
  }

  /** Whether `el` is a text-class element by tag or id word (docs/mcp.md#snapshots), i.e. prints `text` without role.
   *  @param {Element} el */
  function isTextLike(el) {
    const tag = el.localName;
    if (tag === "p" || tag === "dt" || tag === "dd" || tag === "output" || tag === "caption" || tag === "figcaption") return true;
    return (tag === "div" || tag === "span") && el.firstElementChild === null && hasEvidenceId(el);
  }

  /** Whether `el` has an `aria-live` region attribute other than `off`.
   *  @param {Element} el */
  function isLive(el) {
    const v = el.getAttribute("aria-live");
    return v !== null && v.toLowerCase() !== "off";
  }

  const EVIDENCE_WORD = /(?:^|[^a-z0-9])(?:status|result|message|error|success|log|notice|alert|feedback|confirmation)(?=$|[^a-z0-9])/;

  /** Splits camelCase (`statusMsg` → `status msg`, `APIKey` → `api key`) and lower-cases.
   *  @param {string} s */
  function words(s) {
    return s.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2").toLowerCase();
  }

  /** Whether the `id`, `data-testid` or `data-test-id` of `el` contains an evidence word (docs/mcp.md#snapshots).
   *  @param {Element} el */
  function hasEvidenceId(el) {
    for (const a of ["id", "data-testid", "data-test-id"]) {
      const v = el.getAttribute(a);
      if (v && EVIDENCE_WORD.test(words(v))) return true;
    }
    return false;
  }

  /** Accessible name of `el` (docs/mcp.md#snapshots), normalised and untruncated. `r` is its role if known.
   *  @param {Element} el
   *  @param {string | null} [r] */
  function accName(el, r) {
    if (r === undefined) r = role(el);
    if (isTextLike(el) || isLive(el)) return normalize(visibleText(el, false));
    const lb = normalize(labelledByText(el));
    if (lb) return lb;
    const al = normalize(el.getAttribute("aria-label"));
    if (al) return al;
    if (isContainer(el, r)) return "";
    const tag = el.localName;
    for (const t of labelTexts(el)) { const v = normalize(t); if (v) return v; }
    if (tag === "input") {
      const type = /** @type {HTMLInputElement} */ (el).type;
      if (type === "submit" || type === "reset" || type === "button") {
        const v = el.getAttribute("value");
        if (v !== null) { if (normalize(v)) return normalize(v); }
        else if (type !== "button") return type === "submit" ? "Submit" : "Reset";
      }
    }
    // An image's `alt`, even empty, is its name (Chrome reads its `title` as the description).
    if (tag === "img" && el.hasAttribute("alt")) return normalize(el.getAttribute("alt"));
    if (tag === "area" || (tag === "input" && /** @type {HTMLInputElement} */ (el).type === "image")) {
      const v = normalize(el.getAttribute("alt"));
      if (v) return v;
    }
    if (tag === "input" || tag === "textarea") {
      const v = normalize(el.getAttribute("placeholder"));
      if (v) return v;
    }
    const formish = tag === "input" || tag === "textarea" || tag === "select" || isEditingHost(el);
    if (!formish && (r === null || NAME_FROM_CONTENT.has(r) || tag === "label" || tag === "summary")) {
      const v = normalize(visibleText(el, true));
      if (v) return v;
    }
    return normalize(el.getAttribute("title"));
  }

  /** Label texts `label=` compares against (docs/mcp.md#selectors): `<label>`s, `aria-label`, `aria-labelledby`.
   *  @param {Element} el */
  function labelCandidates(el) {
    const out = labelTexts(el).map(normalize);
    const al = el.getAttribute("aria-label");
    if (al !== null) out.push(normalize(al));
    if (el.hasAttribute("aria-labelledby")) out.push(normalize(labelledByText(el)));
    return out;
  }

  /** `tag#id.class1.class2` for messages such as `obscuredBy` (id and classes only if present).
   *  @param {Element} el */
  function describe(el) {
    let s = el.localName;
    if (el.id) s += "#" + el.id;
    const cls = el.getAttribute("class");
    if (cls && cls.trim()) s += "." + cls.trim().split(/\s+/).join(".");
    return cut(s, 120);
  }

  return {
    normalize, cut, words, children, parent, containsFlat, walk, isShadowSlot, attrHidden, underHidden,
    styleOf, isVisible, isReachableZeroSize, isSnapshotVisible, isTypeable, isEnabled, isFillable, isEditable, isEditingHost, text,
    visibleText, renderedText, explicitRole, implicitRole, role, isContainer, labelledByText, labelTexts,
    labelCandidates, labelsOf, withCache, isTextLike, isLive, hasEvidenceId, accName, describe,
    ARIA_ROLES, CONTAINER_ROLES,
  };
})
