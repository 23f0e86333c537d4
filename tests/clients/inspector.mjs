// MCP Inspector's CLI (@modelcontextprotocol/inspector) driving `chromate mcp` over stdio in the
// modern era: once with `protocolEra: "modern"` (pinned to 2026-07-28, no fallback) and once with
// `protocolEra: "auto"` (probes `server/discover`, falls back to `initialize` on a non-modern
// answer; chromate must be found modern). The era is a per-server field of the config file the
// CLI reads with `--config FILE --server NAME`; each run sends the one `--method` and exits.
// Env: CHROMATE_BIN (the binary), FIXTURE_URL (tests/clients/fixture.html served over HTTP).
// Prints one `PASS <check>` or `FAIL <check>: <why>` line per check; exits 1 on any failure.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeCheck, resultOf } from "./checks.mjs";

const { check, failures } = makeCheck("inspector");
const here = dirname(fileURLToPath(import.meta.url));
const inspector = join(here, "node_modules", ".bin", "mcp-inspector");
const url = process.env.FIXTURE_URL;
// The Inspector keeps its catalog and OAuth state under HOME; a scratch HOME keeps runs hermetic.
const home = mkdtempSync(join(tmpdir(), "chromate-inspector-"));
const artifacts = mkdtempSync(join(tmpdir(), "chromate-inspector-artifacts-"));

/** Runs one CLI request against chromate in `era`; returns {status, output, stderr}. */
function run(era, args) {
  const config = join(home, `${era}.json`);
  const server = {
    command: process.env.CHROMATE_BIN,
    args: ["mcp"],
    env: { CHROMATE_MCP_ARTIFACTS_DIR: artifacts },
    protocolEra: era,
  };
  writeFileSync(config, JSON.stringify({ mcpServers: { chromate: server } }));
  const child = spawnSync(inspector, ["--cli", "--config", config, "--server", "chromate", "--format", "json", ...args], {
    env: { ...process.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory" },
    encoding: "utf8",
    timeout: 60_000,
  });
  let output;
  try {
    output = JSON.parse(child.stdout);
  } catch {
    output = undefined;
  }
  return { status: child.status, output, stderr: child.stderr?.split("\n").slice(-3).join(" | ") };
}

for (const era of ["modern", "auto"]) {
  const init = run(era, ["--method", "initialize"]);
  check(
    `${era}: connects at 2026-07-28`,
    init.status === 0 && init.output?.result?.protocolVersion === "2026-07-28" && init.output.result.serverInfo?.name === "chromate",
    `${init.status} ${JSON.stringify(init.output)} ${init.stderr}`,
  );
  check(
    `${era}: capabilities advertise tools and resources`,
    init.output?.result?.capabilities?.tools !== undefined && init.output?.result?.capabilities?.resources !== undefined,
    JSON.stringify(init.output?.result?.capabilities),
  );

  const list = run(era, ["--method", "tools/list"]);
  const tools = list.output?.result?.tools ?? [];
  check(`${era}: tools/list has the 28 tools`, list.status === 0 && tools.length === 28, `${list.status} ${tools.length} tools ${list.stderr}`);
}

const nav = run("modern", ["--method", "tools/call", "--tool-name", "browser_navigate", "--tool-args-json", JSON.stringify({ url })]);
const navResult = nav.output?.result ?? {};
const page = resultOf(navResult);
check(
  "modern: browser_navigate result is the JSON in content[0].text",
  nav.status === 0 && page?.url === url && page?.title === "Client fixture" && navResult.structuredContent === undefined,
  `${nav.status} ${JSON.stringify(nav.output)} ${nav.stderr}`,
);
check(
  "modern: the observation is content[1]",
  navResult.content?.[1]?.text?.startsWith("page: Client fixture — "),
  JSON.stringify(navResult.content),
);

const bad = run("modern", ["--method", "tools/call", "--tool-name", "browser_click", "--tool-args-json", JSON.stringify({ selector: "#nope", timeout_ms: 300 })]);
check(
  "modern: a failing tool exits 5 with structuredContent.error",
  bad.status === 5 && bad.output?.result?.isError === true && bad.output.result.structuredContent?.error?.code === "NO_MATCH",
  `${bad.status} ${JSON.stringify(bad.output)}`,
);

process.exit(failures() === 0 ? 0 : 1);
