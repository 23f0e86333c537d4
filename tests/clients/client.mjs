// A real MCP client (the TypeScript SDK 1.x, @modelcontextprotocol/sdk) driving `chromate mcp`
// over stdio in the legacy era: it opens with `initialize`.
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP);
// CHROMATE_COMMAND, a JSON array run instead of `$CHROMATE_BIN mcp` in the directory
// CHROMATE_CWD (.ci/dist.sh: `["npx", "--no-install", "chromate-mcp", "mcp"]` from an npm install).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checkToolResults, makeCheck } from "./checks.mjs";

const { check, failures } = makeCheck("node");
const bin = process.env.CHROMATE_BIN;
const url = process.env.FIXTURE_URL;
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-node-")) };
const [command, ...args] = process.env.CHROMATE_COMMAND ? JSON.parse(process.env.CHROMATE_COMMAND) : [bin, "mcp"];
const cwd = process.env.CHROMATE_CWD;
const transport = new StdioClientTransport({ command, args, cwd, env, stderr: "ignore" });
const client = new Client({ name: "chromate-node-client-test", version: "0.0.0" });
await client.connect(transport);

check("server info", client.getServerVersion()?.name === "chromate", JSON.stringify(client.getServerVersion()));
check(
  "legacy era: initialize gave the instructions",
  client.getInstructions()?.startsWith("One browser per session."),
  String(client.getInstructions()),
);
check(
  "capabilities advertise tools and resources",
  client.getServerCapabilities()?.tools !== undefined && client.getServerCapabilities()?.resources !== undefined,
  JSON.stringify(client.getServerCapabilities()),
);

await checkToolResults(check, client, url);

const axeVersion = createRequire(import.meta.url)("axe-core/package.json").version;
check("axe-core is installed for browser_a11y", typeof axeVersion === "string", "axe-core missing");

await client.close();
process.exit(failures() === 0 ? 0 : 1);
