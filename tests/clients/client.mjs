// A real MCP client (the TypeScript SDK) driving `chromate mcp` over stdio.
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

let failed = 0;
function check(name, ok, why) {
  if (ok) {
    console.log(`PASS node: ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL node: ${name}: ${why}`);
  }
}

const bin = process.env.CHROMATE_BIN;
const url = process.env.FIXTURE_URL;
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-node-")) };
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env, stderr: "ignore" });
const client = new Client({ name: "chromate-node-client-test", version: "0.0.0" });
await client.connect(transport);

check("server info", client.getServerVersion()?.name === "chromate", JSON.stringify(client.getServerVersion()));

const { tools } = await client.listTools();
check("tools/list has the 28 tools", tools.length === 28 && tools[0].name === "browser_navigate", `${tools.length} tools`);

const nav = await client.callTool({ name: "browser_navigate", arguments: { url } });
const result = nav.structuredContent?.result;
check(
  "browser_navigate result",
  !nav.isError && result?.url === url && result?.title === "Client fixture" && result?.status === 200,
  JSON.stringify(nav),
);
check("browser_navigate observation", nav.content?.[1]?.text?.startsWith("page: Client fixture — "), JSON.stringify(nav.content));

const click = await client.callTool({ name: "browser_click", arguments: { selector: "#save" } });
check("browser_click observes the change", !click.isError && click.content?.[1]?.text?.includes("Saved"), JSON.stringify(click.content));

const bad = await client.callTool({ name: "browser_click", arguments: { selector: "#nope", timeout_ms: 500 } });
const error = bad.structuredContent?.error;
check(
  "a failing tool is an isError result",
  bad.isError === true && error?.code === "NO_MATCH" && bad.content?.[0]?.text?.startsWith("error: click: no element matches css=#nope"),
  JSON.stringify(bad),
);

let rejected = false;
try {
  await client.callTool({ name: "browser_navigate", arguments: { url: url, bogus: 1 } });
} catch (err) {
  rejected = /unknown argument "bogus"/.test(String(err?.message));
}
check("invalid arguments are a protocol error", rejected, "no -32602 for an unknown argument");

const axeVersion = createRequire(import.meta.url)("axe-core/package.json").version;
check("axe-core is installed for browser_a11y", typeof axeVersion === "string", "axe-core missing");

await client.close();
process.exit(failed === 0 ? 0 : 1);
