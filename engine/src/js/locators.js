// @ts-check
// locators: durable selector proposals for one element (docs/tools.md#browser_locators--durable-selectors). Never writes to the page and
// never proposes a ref.
/** @type {(C: Chromate) => ChromateLocators} */
(function (C) {
  "use strict";
  const D = C.dom;
  const S = C.selector;

  const ID_SHAPE = /^[A-Za-z][A-Za-z0-9_-]*$/;
  const GENERATED_ID = /^[0-9]|[0-9a-f]{8,}|[0-9]{4,}|^:r|^ember[0-9]|^mui-|^radix-|^headlessui-|^react-aria-/i;
  const VOLATILE = /[0-9\p{Sc}]/u;
  const LABELLED = new Set(["input", "textarea", "select"]);
  /** Roles the `label=` engine accepts besides native controls (as in selector.js). */
  const FORM_ROLES = new Set(["textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "switch",
    "slider", "spinbutton"]);
  const MAX_CHECKED = 8;

  /** Whether an id looks machine-generated (docs/tools.md#browser_locators--durable-selectors) or unusable as a bare `#id`.
   *  @param {string} id */
  function isGeneratedId(id) {
    return !ID_SHAPE.test(id) || GENERATED_ID.test(id);
  }

  /** Grades `selector` against `target`: `{status:"unique"|"ambiguous"|"missing", matches}`.
   *  @param {string} selector
   *  @param {Element} target */
  function grade(selector, target) {
    const els = S.queryAll(selector);
    const has = els.includes(target);
    return { status: !has ? "missing" : els.length === 1 ? "unique" : "ambiguous", matches: els.length };
  }

  /** `suggest({selector | ref, limit?=5})` → `{status:"ok", target:{tag, role, name, canonical},
   *  candidates:[{selector, kind, status:"unique"|"ambiguous"|"missing", matches}], best, note?}` |
   *  `{status:"no-match"}` | stale/invalid. Candidates in the order of docs/tools.md#browser_locators--durable-selectors (role, label, testid,
   *  placeholder, alt, text, id, name); a volatile-looking name (digit or currency sign) moves
   *  role and text last and sets `note`. At most 8 are checked; stops after `limit` uniques;
   *  returns at most `limit` + 2. `best` is the first unique selector or null.
   *  @param {{selector?: string, ref?: number, limit?: number}} args */
  function suggest(args) {
    const limit = args.limit || 5;
    const sel = args.ref != null ? "ref=e" + args.ref : args.selector;
    const r = S.resolve(sel);
    if (!r.ok) {
      if (r.error === "stale-ref") return { status: "stale-ref", ref: r.ref, reason: r.status };
      return { status: "invalid-selector", reason: r.reason, browserMessage: r.browserMessage };
    }
    if (!r.elements.length) return { status: "no-match", canonical: r.canonical };
    return suggestFor(r.elements[0], limit, r.canonical);
  }

  /** `suggestFor(el, limit, canonical)` → `suggest`'s `{status:"ok", …}` answer for one
   *  element.
   *  @param {Element} el
   *  @param {number} limit
   *  @param {string} canonical
   *  @returns {LocatorAnswer} */
  function suggestFor(el, limit, canonical) {
    const tag = el.localName;
    const role = D.role(el);
    const name = role ? D.accName(el, role) : "";
    const volatile = VOLATILE.test(name);

    /** @type {{selector: string, kind: string}[]} */
    const front = [];
    /** @type {{selector: string, kind: string}[]} */
    const back = [];
    const roleCand = [];
    if (role && role !== "none" && role !== "presentation" && D.ARIA_ROLES.has(role) && name.length <= 80) {
      roleCand.push({ selector: "role=" + role + (name ? "[name=" + S.quote(name) + "]" : ""), kind: "role" });
    }
    (volatile ? back : front).push(...roleCand);
    if ((LABELLED.has(tag) && !(tag === "input" && /** @type {HTMLInputElement} */ (el).type === "hidden")) || FORM_ROLES.has(D.explicitRole(el))) {
      const label = D.labelCandidates(el).find(/** @param {string} v */ (v) => v);
      if (label) front.push({ selector: "label=" + label, kind: "label" });
    }
    const testid = el.getAttribute("data-testid");
    if (testid) front.push({ selector: "testid=" + testid, kind: "testid" });
    const ph = el.getAttribute("placeholder");
    if (ph && (tag === "input" || tag === "textarea")) front.push({ selector: "placeholder=" + ph, kind: "placeholder" });
    const alt = el.getAttribute("alt");
    if (alt && (tag === "img" || tag === "area" || (tag === "input" && /** @type {HTMLInputElement} */ (el).type === "image"))) front.push({ selector: "alt=" + alt, kind: "alt" });
    const text = D.normalize(D.text(el));
    if (text && text.length <= 80) (volatile ? back : front).push({ selector: "text=" + text, kind: "text" });
    const id = el.getAttribute("id");
    if (id && !isGeneratedId(id)) front.push({ selector: "#" + id, kind: "id" });
    const nm = el.getAttribute("name");
    if (nm && !/["\\]/.test(nm)) front.push({ selector: "css=" + tag + '[name="' + nm + '"]', kind: "name" });

    const ordered = front.concat(back).slice(0, MAX_CHECKED);
    const candidates = [];
    let uniques = 0;
    for (const c of ordered) {
      if (uniques >= limit || candidates.length >= limit + 2) break;
      const g = grade(c.selector, el);
      candidates.push({ selector: c.selector, kind: c.kind, status: g.status, matches: g.matches });
      if (g.status === "unique") uniques++;
    }
    const best = candidates.find((c) => c.status === "unique");
    /** @type {LocatorAnswer} */
    const res = {
      status: "ok",
      target: { tag, role: role || null, name: name || null, canonical },
      candidates,
      best: best ? best.selector : null,
    };
    if (volatile && roleCand.length + (text ? 1 : 0) > 0) {
      res.note = "the accessible name looks volatile (digit or currency sign), so role and text candidates come last";
    }
    if (!best) res.note = (res.note ? res.note + "; " : "") + "no unique selector: consider adding a data-testid attribute";
    return res;
  }

  /** A CSS path that matches `el` alone: from its nearest ancestor (or itself) with a unique,
   *  hand-written id, else from `html`, each step `tag:nth-of-type(n)`. Shadow roots are not
   *  crossed (the path starts at the element's own root).
   *  @param {Element} el */
  function cssPath(el) {
    const steps = [];
    let node = el;
    while (node && node.nodeType === 1) {
      const id = node.getAttribute("id");
      if (id && !isGeneratedId(id) && /** @type {ParentNode} */ (node.getRootNode()).querySelectorAll("#" + CSS.escape(id)).length === 1) {
        steps.unshift("#" + id);
        break;
      }
      const tag = node.localName;
      const parent = node.parentElement;
      if (!parent) {
        steps.unshift(tag);
        break;
      }
      const same = Array.from(parent.children).filter((c) => c.localName === tag);
      steps.unshift(same.length > 1 ? tag + ":nth-of-type(" + (same.indexOf(node) + 1) + ")" : tag);
      node = parent;
    }
    return "css=" + steps.join(" > ");
  }

  /** `durable(el)` → the first unique durable selector of `suggestFor`, else a unique CSS path
   *  (never a ref); null for something that is not an element.
   *  @param {Element} el */
  function durable(el) {
    if (!el || el.nodeType !== 1) return null;
    const answer = suggestFor(el, 1, "");
    return answer.best || cssPath(el);
  }

  return { suggest, suggestFor, durable, isGeneratedId };
})
