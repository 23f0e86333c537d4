// Types for the TypeScript compiler only (tests/clients/tsconfig.page-js*.json): the namespace
// object `C` every installer module of engine/src/js/*.js receives (mod.rs, `install_source`),
// and the shapes the modules hand each other. Never embedded in a page: mod.rs includes only the
// `.js` files it names.

/** The namespace `C`: each installer module, keyed as in mod.rs's `MODULES`. */
interface Chromate {
  /** dom.js is not typed yet (it is outside tsconfig.page-js-strict.json): any. */
  dom: any;
  refs: ChromateRefs;
  selector: ChromateSelector;
  /** snapshot.js is not typed yet (it is outside tsconfig.page-js-strict.json): any. */
  snapshot: any;
  locators: ChromateLocators;
  // Called from Rust only (by name, `__chromate.<module>.<function>`), never by another module:
  // each file types its own functions.
  actionability: Record<string, Function>;
  screenshot: Record<string, Function>;
  a11y: Record<string, Function>;
  redact: Record<string, Function>;
  settle: Record<string, Function>;
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
