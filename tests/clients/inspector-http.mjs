// MCP Inspector's CLI (@modelcontextprotocol/inspector) over Streamable HTTP: `--transport http`
// against `chromate mcp --http 127.0.0.1:0`; each run sends one `--method` and exits.
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { makeCheck, resultOf } from "./checks.mjs";

const { check, failures } = makeCheck("inspector-http");
const here = dirname(fileURLToPath(import.meta.url));
const inspector = join(here, "node_modules", ".bin", "mcp-inspector");
const url = process.env.FIXTURE_URL;
const home = mkdtempSync(join(tmpdir(), "chromate-inspector-http-"));
const env = { ...process.env, CHROMATE_MCP_ARTIFACTS_DIR: mkdtempSync(join(tmpdir(), "chromate-inspector-http-artifacts-")),
  // The generated token's file goes here, not in the user's own runtime directory.
  CHROMATE_RUNTIME_DIR: join(mkdtempSync(join(tmpdir(), "chromate-runtime-")), "run") };
const server = spawn(process.env.CHROMATE_BIN, ["mcp", "--http", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
// The server generates its token (the default) and prints it once; the CLI sends it.
const { endpoint, token } = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("the server printed no address or token in 20 s")), 20000);
  let endpoint, token;
  createInterface({ input: server.stderr }).on("line", (line) => {
    endpoint ??= line.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1];
    token ??= line.match(/auth token \(generated[^)]*\): ([0-9a-f]{64}) /)?.[1];
    if (endpoint && token) {
      clearTimeout(timer);
      resolve({ endpoint, token });
    }
  });
});

function run(args) {
  const child = spawnSync(inspector, ["--cli", endpoint, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--format", "json", ...args], {
    env: { ...process.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory" },
    encoding: "utf8",
    timeout: 60_000,
  });
  try {
    return { status: child.status, output: JSON.parse(child.stdout), stderr: child.stderr };
  } catch {
    return { status: child.status, output: undefined, stderr: `${child.stdout}\n${child.stderr}` };
  }
}

try {
  const list = run(["--method", "tools/list"]);
  const tools = list.output?.result?.tools ?? list.output?.tools;
  check("tools/list over HTTP has the 28 tools", tools?.length === 28, list.stderr);
  const nav = run(["--method", "tools/call", "--tool-name", "browser_navigate", "--tool-arg", `url=${url}`]);
  const result = nav.output?.result ?? nav.output;
  check("browser_navigate over HTTP", !result?.isError && resultOf(result)?.title === "Client fixture", JSON.stringify(nav.output) + nav.stderr);
} finally {
  const exited = new Promise((resolve) => server.on("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  const code = await exited;
  check("the server exited cleanly on SIGTERM", code === 0, `exit code ${code}`);
}
process.exit(failures() === 0 ? 0 : 1);
