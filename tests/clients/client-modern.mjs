// A real MCP client (the TypeScript SDK 2.x, @modelcontextprotocol/client) driving `chromate mcp`
// over stdio in the modern era (revision 2026-07-28): no `initialize`; the SDK sends
// `server/discover` and then the protocol version and client capabilities in every request's
// `_meta`. Pinned to 2026-07-28 for the main run; a second connection uses the `auto` mode, which
// probes with `server/discover` and must stay modern.
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { checkToolResults, makeCheck } from "./checks.mjs";

const { check, failures } = makeCheck("node-modern");
const bin = process.env.CHROMATE_BIN;
const url = process.env.FIXTURE_URL;
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-node-modern-")) };

function connect(mode) {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env, stderr: "ignore" });
  const client = new Client(
    { name: "chromate-node-modern-client-test", version: "0.0.0" },
    { versionNegotiation: { mode } },
  );
  return client.connect(transport).then(() => client);
}

const client = await connect({ pin: "2026-07-28" });
check(
  "modern era at 2026-07-28",
  client.getProtocolEra() === "modern" && client.getNegotiatedProtocolVersion() === "2026-07-28",
  `${client.getProtocolEra()} ${client.getNegotiatedProtocolVersion()}`,
);
check("server info from result _meta", client.getServerVersion()?.name === "chromate", JSON.stringify(client.getServerVersion()));
const discover = client.getDiscoverResult();
check(
  "server/discover lists the versions and capabilities",
  discover?.supportedVersions?.[0] === "2026-07-28" &&
    discover.supportedVersions.includes("2025-11-25") &&
    discover.capabilities?.tools !== undefined &&
    discover.capabilities?.resources !== undefined &&
    discover.instructions?.startsWith("One browser per session.") &&
    discover.cacheScope === "public" &&
    Number.isInteger(discover.ttlMs),
  JSON.stringify(discover),
);

await checkToolResults(check, client, url);
await client.close();

const auto = await connect("auto");
check(
  "auto mode probes server/discover and stays modern",
  auto.getProtocolEra() === "modern" && auto.getNegotiatedProtocolVersion() === "2026-07-28",
  `${auto.getProtocolEra()} ${auto.getNegotiatedProtocolVersion()}`,
);
const { tools } = await auto.listTools();
check("auto mode: tools/list", tools.length === 28, `${tools.length} tools`);
await auto.close();

process.exit(failures() === 0 ? 0 : 1);
