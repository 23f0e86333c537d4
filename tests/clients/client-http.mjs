// A real MCP client over Streamable HTTP (the TypeScript SDK 1.x, @modelcontextprotocol/sdk,
// StreamableHTTPClientTransport) driving `chromate mcp --http 127.0.0.1:0`: the shared tool
// checks on one session, then 20 concurrent sessions on the same fixture origin, each setting a
// different cookie and reading back only its own (each session is its own browser context).
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkToolResults, makeCheck, resultOf } from "./checks.mjs";

const { check, failures } = makeCheck("node-http");
const bin = process.env.CHROMATE_BIN;
const url = process.env.FIXTURE_URL;
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-node-http-")) };
const server = spawn(bin, ["mcp", "--http", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
const endpoint = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("the server printed no address in 20 s")), 20000);
  createInterface({ input: server.stderr }).on("line", (line) => {
    const found = line.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    if (found) {
      clearTimeout(timer);
      resolve(found[1]);
    }
  });
  server.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
});

async function connect(name) {
  const transport = new StreamableHTTPClientTransport(new URL(endpoint));
  const client = new Client({ name, version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

try {
  const first = await connect("chromate-node-http-client-test");
  check("server info over HTTP", first.client.getServerVersion()?.name === "chromate", JSON.stringify(first.client.getServerVersion()));
  check("the server minted a session id", typeof first.transport.sessionId === "string" && first.transport.sessionId.length >= 16, String(first.transport.sessionId));
  await checkToolResults(check, first.client, url);
  await first.transport.terminateSession();
  check("DELETE ended the session", first.transport.sessionId === undefined, String(first.transport.sessionId));
  await first.client.close();

  const sessions = await Promise.all(Array.from({ length: 20 }, (_, i) => connect(`agent-${i}`)));
  const seen = await Promise.all(
    sessions.map(async ({ client }, i) => {
      await client.callTool({ name: "browser_navigate", arguments: { url } });
      await client.callTool({ name: "browser_advanced_eval", arguments: { js: `document.cookie = "agent=a${i}; path=/"; return true` } });
      // Reload: the cookie comes back from the browser's jar of this session's context.
      await client.callTool({ name: "browser_navigate", arguments: { url } });
      const read = await client.callTool({ name: "browser_advanced_eval", arguments: { js: "document.cookie" } });
      return resultOf(read)?.value ?? resultOf(read);
    }),
  );
  const own = seen.every((cookie, i) => JSON.stringify(cookie).includes(`agent=a${i}`) && (JSON.stringify(cookie).match(/agent=/g) ?? []).length === 1);
  check("20 concurrent sessions each read back only their own cookie", own, JSON.stringify(seen));
  await Promise.all(sessions.map(async ({ client, transport }) => {
    await transport.terminateSession();
    await client.close();
  }));
} catch (err) {
  check("the HTTP client ran to the end", false, err?.stack ?? String(err));
} finally {
  const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
  server.kill("SIGTERM");
  const { code } = await exited;
  check("the server exited cleanly on SIGTERM", code === 0, `exit code ${code}`);
}
process.exit(failures() === 0 ? 0 : 1);
