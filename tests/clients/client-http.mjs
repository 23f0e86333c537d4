// A real MCP client over Streamable HTTP (the TypeScript SDK 1.x, @modelcontextprotocol/sdk,
// StreamableHTTPClientTransport) driving `chromate mcp --http 127.0.0.1:0`: the shared tool
// checks on one session, then 20 concurrent sessions on the same fixture origin, each setting a
// different cookie and reading back only its own (each session is its own browser context);
// the server generated its token (no --auth-token), so no token is 401; then, against a second
// server on loopback with `--auth-token`, that the SDK surfaces the
// server's 401 (no token, a wrong one) and 403 (a foreign Origin) as errors with those codes,
// and that the right token gets in.
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
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-node-http-")),
  // The generated token's file goes here, not in the user's own runtime directory.
  CHROMATE_RUNTIME_DIR: join(mkdtempSync(join(tmpdir(), "chromate-runtime-")), "run") };
/** `chromate mcp --http 127.0.0.1:0 ...extra`, the endpoint it printed and the token it
 * generated (none when `extra` names --auth-token or --no-auth). */
async function startServer(extra) {
  const child = spawn(bin, ["mcp", "--http", "127.0.0.1:0", ...extra], { env, stdio: ["ignore", "ignore", "pipe"] });
  const generates = !extra.includes("--auth-token") && !extra.includes("--no-auth");
  const { address, token } = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the server printed no address (or no token) in 20 s")), 20000);
    let address, token;
    createInterface({ input: child.stderr }).on("line", (line) => {
      address ??= line.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1];
      token ??= line.match(/auth token \(generated[^)]*\): ([0-9a-f]{64}) /)?.[1];
      if (address && (token || !generates)) {
        clearTimeout(timer);
        resolve({ address, token });
      }
    });
    child.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return { child, address, token };
}

/** SIGTERM, then the exit code. */
async function stopServer(child) {
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  return exited;
}

// The shared server generated its token (the default); every client sends it.
const { child: server, address: endpoint, token: generated } = await startServer([]);
const generatedAuth = { Authorization: `Bearer ${generated}` };

async function connect(name, at = endpoint, headers = generatedAuth) {
  const transport = new StreamableHTTPClientTransport(new URL(at), headers ? { requestInit: { headers } } : undefined);
  const client = new Client({ name, version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** What connecting with `headers` threw (undefined when it connected; the client is closed). */
async function connectError(at, headers) {
  try {
    const { client } = await connect("chromate-node-http-refused", at, headers);
    await client.close();
    return undefined;
  } catch (err) {
    return err;
  }
}

/** The auth token and the Origin check, through the SDK, on a loopback server with a token. */
async function authAndOrigin() {
  const token = "s3cret-token-for-the-sdk-test";
  const guarded = await startServer(["--auth-token", token]);
  try {
    const missing = await connectError(guarded.address, {});
    check("no token: the SDK's connect fails with HTTP 401", missing?.code === 401, `${missing?.name}: ${missing?.message} (code ${missing?.code})`);
    const wrong = await connectError(guarded.address, { Authorization: `Bearer ${token}x` });
    check("a wrong token: the SDK's connect fails with HTTP 401", wrong?.code === 401, `${wrong?.name}: ${wrong?.message} (code ${wrong?.code})`);
    const foreign = await connectError(guarded.address, { Authorization: `Bearer ${token}`, Origin: "https://evil.example" });
    check("a foreign Origin: the SDK's connect fails with HTTP 403", foreign?.code === 403, `${foreign?.name}: ${foreign?.message} (code ${foreign?.code})`);
    const admitted = await connect("chromate-node-http-token", guarded.address, { Authorization: `Bearer ${token}`, Origin: "http://localhost:5173" });
    const tools = await admitted.client.listTools();
    check("the right token and a loopback Origin get in", tools.tools.length >= 20, `${tools.tools.length} tools`);
    await admitted.transport.terminateSession();
    await admitted.client.close();
  } finally {
    const code = await stopServer(guarded.child);
    check("the token server exited cleanly on SIGTERM", code === 0, `exit code ${code}`);
  }
}

try {
  const refused = await connectError(endpoint, {});
  check("the default server generated a token: no token is HTTP 401", generated?.length === 64 && refused?.code === 401, `${refused?.name}: ${refused?.message} (code ${refused?.code})`);
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
  await authAndOrigin();
} catch (err) {
  check("the HTTP client ran to the end", false, err?.stack ?? String(err));
} finally {
  const code = await stopServer(server);
  check("the server exited cleanly on SIGTERM", code === 0, `exit code ${code}`);
}
process.exit(failures() === 0 ? 0 : 1);
