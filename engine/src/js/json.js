// @ts-check
// json: converts an evaluation result to JSON text as JSON.stringify does (docs/tools.md#browser_advanced_eval--evaluate-javascript), so toJSON is
// honoured (a Date becomes its ISO string) where the protocol's returnByValue would give `{}`.
// Not an installer module: it runs on its own, through Runtime.callFunctionOn on the result
// object in the page's main world (the world the caller's script ran in), with the value as
// `this`. A throw from the value's own toJSON or getters is the page script's throw and
// propagates (EVAL_THREW).
(function () {
  "use strict";
  /**
   * `this` → `{json: string}` (`"null"` when JSON.stringify gives undefined), or
   * `{unserialisable: "circular" | "bigint"}` for what JSON cannot hold.
   */
  try {
    const text = JSON.stringify(this);
    return { json: text === undefined ? "null" : text };
  } catch (e) {
    if (e instanceof TypeError && /circular/i.test(e.message)) {
      return { unserialisable: "circular" };
    }
    if (e instanceof TypeError && /bigint/i.test(e.message)) {
      return { unserialisable: "bigint" };
    }
    throw e;
  }
})
