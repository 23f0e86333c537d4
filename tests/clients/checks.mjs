// The checks both TypeScript clients run against `chromate mcp`, whatever their SDK and era:
// tool results and errors are the same in both eras (docs/mcp.md#protocol-eras and docs/mcp.md#results).
// A success result has no structuredContent: content[0].text is the compact JSON of the result
// and content[1] the observation, so a host that shows the model only the text blocks (or only
// structuredContent when present) still gives the model the observation. Errors keep
// structuredContent.error.

/** A `check(name, ok, why)` that prints PASS/FAIL lines tagged `tag`, and a failure count. */
export function makeCheck(tag) {
  let failed = 0;
  const check = (name, ok, why) => {
    if (ok) {
      console.log(`PASS ${tag}: ${name}`);
    } else {
      failed += 1;
      console.log(`FAIL ${tag}: ${name}: ${why}`);
    }
  };
  return { check, failures: () => failed };
}

/** content[0].text parsed as JSON, or undefined. */
export function resultOf(callResult) {
  try {
    return JSON.parse(callResult.content?.[0]?.text ?? "");
  } catch {
    return undefined;
  }
}

/** Runs the shared tool checks; `url` is the fixture page. */
export async function checkToolResults(check, client, url) {
  const { tools } = await client.listTools();
  check("tools/list has the 28 tools", tools.length === 28 && tools[0].name === "browser_navigate", `${tools.length} tools`);

  const nav = await client.callTool({ name: "browser_navigate", arguments: { url } });
  const result = resultOf(nav);
  check(
    "browser_navigate result is the JSON in content[0].text",
    !nav.isError && result?.url === url && result?.title === "Client fixture" && result?.status === 200,
    JSON.stringify(nav),
  );
  check(
    "browser_navigate observation reaches the model as content[1]",
    nav.content?.length === 2 && nav.content[1].type === "text" && nav.content[1].text.startsWith("page: Client fixture — "),
    JSON.stringify(nav.content),
  );
  check("a success result has no structuredContent", nav.structuredContent === undefined, JSON.stringify(nav.structuredContent));

  const click = await client.callTool({ name: "browser_click", arguments: { selector: "#save" } });
  check(
    "browser_click observes the change",
    !click.isError && resultOf(click) !== undefined && click.content?.[1]?.text?.includes("Saved"),
    JSON.stringify(click.content),
  );

  const snapshot = await client.callTool({ name: "browser_snapshot", arguments: {} });
  check(
    "browser_snapshot content[0] is the rendered snapshot",
    !snapshot.isError && /button "Save"/.test(snapshot.content?.[0]?.text ?? "") && snapshot.structuredContent === undefined,
    JSON.stringify(snapshot),
  );

  const bad = await client.callTool({ name: "browser_click", arguments: { selector: "#nope", timeout_ms: 500 } });
  const error = bad.structuredContent?.error;
  check(
    "a failing tool is an isError result with structuredContent.error",
    bad.isError === true && error?.code === "NO_MATCH" && bad.content?.[0]?.text?.startsWith("error: click: no element matches css=#nope"),
    JSON.stringify(bad),
  );

  let invalid;
  try {
    invalid = await client.callTool({ name: "browser_navigate", arguments: { url, bogus: 1 } });
  } catch (err) {
    invalid = { thrown: String(err?.message) };
  }
  check(
    "an unknown argument is an INVALID_ARGUMENT tool error",
    invalid.isError === true && invalid.structuredContent?.error?.code === "INVALID_ARGUMENT" && /unknown argument "bogus"/.test(invalid.content?.[0]?.text ?? ""),
    JSON.stringify(invalid),
  );

  let unknownTool = "no error";
  try {
    await client.callTool({ name: "browser_frobnicate", arguments: {} });
  } catch (err) {
    unknownTool = `${err?.code} ${err?.message}`;
  }
  check("an unknown tool is a -32602 protocol error", /^-32602 .*unknown tool "browser_frobnicate"/.test(unknownTool), unknownTool);
}
