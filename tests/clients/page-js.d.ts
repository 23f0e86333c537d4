// Types for the TypeScript compiler only (tests/clients/tsconfig.page-js*.json): the namespace
// object `C` every installer module of engine/src/js/*.js receives (mod.rs, `install_source`),
// and the shapes the modules hand each other. Never embedded in a page: mod.rs includes only the
// `.js` files it names.

/** The namespace `C`: each installer module, keyed as in mod.rs's `MODULES`. */
interface Chromate {
  dom: ChromateDom;
  refs: ChromateRefs;
  selector: ChromateSelector;
  snapshot: ChromateSnapshot;
  locators: ChromateLocators;
  // Called from Rust only (by name, `__chromate.<module>.<function>`), never by another module:
  // each file types its own functions.
  actionability: Record<string, Function>;
  screenshot: Record<string, Function>;
  a11y: Record<string, Function>;
  redact: Record<string, Function>;
  settle: Record<string, Function>;
}

/** dom.js: flat-tree traversal, text, element states, roles and accessible names. */
interface ChromateDom {
  normalize(s: string | null | undefined): string;
  cut(s: string, n: number): string;
  words(s: string): string;
  /** Open shadow roots' and slots' children in place of the host's: a live list or an array. */
  children(node: Node): ArrayLike<Node>;
  parent(node: Node): Node | null;
  containsFlat(a: Node, b: Node): boolean;
  walk(root: Element | Document | DocumentFragment, visit: (el: Element) => boolean | void): void;
  isShadowSlot(el: Element): boolean;
  attrHidden(el: Element): boolean;
  underHidden(el: Element): boolean;
  styleOf(el: Element): CSSStyleDeclaration;
  isVisible(el: Element): boolean;
  isReachableZeroSize(el: Element): boolean;
  isSnapshotVisible(el: Element): boolean;
  isTypeable(el: Element): boolean;
  isEnabled(el: Element): boolean;
  isFillable(el: Element): boolean;
  isEditable(el: Element): boolean;
  isEditingHost(el: Element): boolean;
  text(el: Element): string;
  visibleText(el: Element, fromContent?: boolean): string;
  renderedText(el: Element): string;
  explicitRole(el: Element): string | null;
  implicitRole(el: Element): string | null;
  role(el: Element): string | null;
  isContainer(el: Element, r: string | null): boolean;
  labelledByText(el: Element): string;
  labelTexts(el: Element): string[];
  labelCandidates(el: Element): string[];
  labelsOf(el: Element): ArrayLike<HTMLLabelElement>;
  /** `fn()` with the per-call caches on (never across calls). */
  withCache<T>(fn: () => T): T;
  isTextLike(el: Element): boolean;
  isLive(el: Element): boolean;
  hasEvidenceId(el: Element): boolean;
  /** `r`: the role if known (computed when undefined). */
  accName(el: Element, r?: string | null): string;
  describe(el: Element): string;
  ARIA_ROLES: Set<string>;
  CONTAINER_ROLES: Set<string>;
}

/** refs.js: the ref table of this world. */
interface ChromateRefs {
  assign(el: Element, nextRef: number): { ref: number; nextRef: number };
  refOf(el: Element): number | null;
  lookup(n: number): RefLookup;
  status(n: number): string;
  parse(s: string): number | null;
}

/** `refs.lookup`'s answer: `element` only with status "ok". */
interface RefLookup {
  status: "ok" | "detached" | "ambiguous" | "unknown";
  element?: Element;
}

/** selector.js: the selector grammar and its engines. */
interface ChromateSelector {
  parse(selector: string): ParsedSelector;
  resolve(selector: string | ParsedSelector, root?: Element | Document | null): ResolvedSelector;
  queryAll(selector: string | ParsedSelector, root?: Element | Document | null): Element[];
  query(selector: string | ParsedSelector, root?: Element | Document | null): Element | null;
  quote(s: string): string;
}

/** `selector.parse`'s answer: with `ok`, the engine and its value; else why the selector is invalid. */
interface ParsedSelector {
  ok: boolean;
  engine?: string;
  value?: string;
  canonical?: string;
  ref?: number;
  bare?: boolean;
  role?: string;
  name?: string | null;
  error?: string;
  reason?: string;
  browserMessage?: string;
}

/** `selector.resolve`'s answer: with `ok`, the matches in flat-tree order; else an invalid
 *  selector (`reason`, `browserMessage`) or a stale ref (`ref`, `status`). */
interface ResolvedSelector {
  ok: boolean;
  canonical?: string;
  elements?: Element[];
  error?: string;
  reason?: string;
  browserMessage?: string;
  ref?: number;
  status?: string;
}

/** snapshot.js: the snapshot walk and its reference renderer. */
interface ChromateSnapshot {
  take(args: SnapshotTakeArgs): SnapshotPiece | ResolvedSelector | { ok: false; error: string; canonical: string };
  takeJson(args: SnapshotTakeArgs): string;
  resume(args: SnapshotResumeArgs): SnapshotPiece | { ok: false; error: string };
  resumeJson(args: SnapshotResumeArgs): string;
  pausedFrame(token: number): Element | null;
  cancel(args: { token: number }): { ok: true };
  render(res: SnapshotPiece, url?: string): string;
  renderLine(l: SnapshotLine): string;
  frameOwner(index: number): Element | null;
  isSecretField(el: Element, name?: string): boolean;
  isSecretWord(s: string | null | undefined): boolean;
}

/** The budget classes of snapshot lines (docs/mcp.md#snapshots). */
type SnapshotClass = "semantic" | "evidence" | "text";

/** What is left of each budget; `unlisted`: text lines kept beyond the text budget. */
interface SnapshotBudgets {
  semantic: number;
  evidence: number;
  text: number;
  unlisted: number;
}

/** `snapshot.take`'s argument (engine/src/snapshot/mod.rs sends it). */
interface SnapshotTakeArgs {
  nextRef?: number;
  budgets?: Partial<SnapshotBudgets>;
  maxOptions?: number;
  lastRef?: number;
  after?: number | null;
  scopeRef?: number | null;
  scopeSelector?: string | null;
}

/** `snapshot.resume`'s argument: the counter and budgets left after the paused frame. */
interface SnapshotResumeArgs {
  token: number;
  nextRef: number;
  budgets?: Partial<SnapshotBudgets>;
  truncated?: boolean;
  more?: boolean;
  skipping?: boolean;
  lastRef?: number;
}

/** A line record (engine/src/snapshot/mod.rs's `LineRecord` decodes it). */
interface SnapshotLine {
  depth: number;
  ref?: number;
  role?: string;
  kind?: SnapshotClass | "shadow" | "iframe";
  container?: boolean;
  name?: string;
  level?: number;
  href?: string;
  value?: string;
  options?: string;
  hint?: string;
  disabled?: boolean;
  checked?: true | "mixed";
  selected?: boolean;
  expanded?: string;
  pressed?: string;
  current?: string;
  frame?: { index: number };
  unlisted?: boolean;
}

/** One piece of a walk: the lines since the last piece; `paused` when it stopped at a
 *  cross-origin frame. */
interface SnapshotPiece {
  lines: SnapshotLine[];
  nextRef: number;
  budgets: SnapshotBudgets;
  truncated: boolean;
  more: boolean;
  cutRef: number | undefined;
  skipping: boolean;
  title: string;
  url: string;
  ms: number;
  paused?: { token: number; frame: { index: number }; depth: number };
}

/** locators.js: durable selector proposals. */
interface ChromateLocators {
  suggest(args: { selector?: string; ref?: number; limit?: number }): object;
  suggestFor(el: Element, limit: number, canonical: string): LocatorAnswer;
  durable(el: Element): string | null;
  isGeneratedId(id: string): boolean;
}

/** `locators.suggestFor`'s answer. */
interface LocatorAnswer {
  status: string;
  target: { tag: string; role: string | null; name: string | null; canonical: string };
  candidates: { selector: string; kind: string; status: string; matches: number }[];
  best: string | null;
  note?: string;
}

/** vitals.js's recorder, kept on the isolated world's global for audit.js. */
declare var __chromateVitals: VitalsState | undefined;

/** What vitals.js has recorded so far (`flush` first delivers what the observers queued). */
interface VitalsState {
  lcp: number | null;
  lcpElement: Element | null;
  shifts: { value: number; time: number; node: Node | null }[];
  longTasks: { start: number; duration: number }[];
  fcp: number | null;
  hidden: boolean;
  flush?: () => void;
}

/** A `layout-shift` performance entry (not in TypeScript's DOM types). */
interface LayoutShiftEntry extends PerformanceEntry {
  value: number;
  hadRecentInput: boolean;
  sources: { node: Node | null; previousRect: DOMRectReadOnly; currentRect: DOMRectReadOnly }[];
}

/** axe-core, evaluated into the isolated world by Rust (a11y.rs): a third-party library this
 *  repository has no types for, so any. */
declare var axe: any;

/** The part of `axe.run`'s results a11y.js reads (axe-core's own shapes). */
interface AxeResults {
  violations: AxeViolation[];
  passes: unknown[];
  incomplete: unknown[];
}

interface AxeViolation {
  id: string;
  impact?: string | null;
  tags?: string[];
  help?: string;
  description?: string;
  helpUrl?: string;
  nodes: AxeNode[];
}

interface AxeNode {
  /** Selectors: one per frame, an array of them through shadow roots. */
  target?: (string | string[])[];
  html?: string;
  failureSummary?: string;
  /** There with `elementRef: true`. */
  element?: Element;
}
