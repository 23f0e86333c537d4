// Full-snapshot size of chromate against chrome-devtools-mcp on the same pages, side by side.
//
//   node benches/peers/snapshot_bytes.mjs <chrome-devtools-mcp dir> <chromate binary> <base url>
//
// <chrome-devtools-mcp dir> holds `node_modules/chrome-devtools-mcp` (installed with
// `PUPPETEER_SKIP_DOWNLOAD=1 npm install chrome-devtools-mcp@1.11.0`, using Debian's Chromium);
// the MCP client is the TypeScript SDK from tests/clients. Prints bytes per page for both
// servers: chromate's full uncapped snapshot (browser_snapshot max_lines=5000, the spilled
// file's size) and chrome-devtools-mcp's take_snapshot text.
import { Client } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../../tests/clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";

const [cdmDir, chromateBin, base] = process.argv.slice(2);
const pages = ["bench-2000.html", "bench-10000.html"];

async function connect(command, args, env) {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env } }));
  return client;
}

const cdm = await connect("node", [
  `${cdmDir}/node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js`,
  "--headless", "--isolated", "--executablePath", "/usr/bin/chromium",
  "--chromeArg=--no-sandbox", "--chromeArg=--disable-gpu", "--usageStatistics=false",
  "--viewport", "1280x800", "--no-page-id-routing",
], { CI: "1" });
const chromate = await connect(chromateBin, ["mcp"], {});

for (const page of pages) {
  const url = `${base}/${page}`;
  await cdm.callTool({ name: "navigate_page", arguments: { url } });
  const theirs = await cdm.callTool({ name: "take_snapshot", arguments: {} });
  const theirText = theirs.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  await chromate.callTool({ name: "browser_navigate", arguments: { url } });
  const ours = await chromate.callTool({ name: "browser_snapshot", arguments: { max_lines: 5000 } });
  const text = ours.content[0].text;
  const spilled = /\(full output: .*, (\d+) bytes\)/.exec(text);
  const ourBytes = spilled ? Number(spilled[1]) : Buffer.byteLength(text);
  const theirBytes = Buffer.byteLength(theirText);
  if (theirBytes < 1000) console.log(`chrome-devtools-mcp said: ${theirText}`);
  const lines = ours.structuredContent.result?.lines?.length ?? "(over the response cap)";
  console.log(`${page}: chromate ${ourBytes} bytes (${lines} lines), chrome-devtools-mcp ${theirBytes} bytes, ratio ${(ourBytes / theirBytes).toFixed(2)}`);
}
await cdm.close();
await chromate.close();
