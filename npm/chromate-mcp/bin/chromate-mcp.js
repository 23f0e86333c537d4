#!/usr/bin/env node
// Runs the chromate binary from this platform's package (chromate-mcp-<os>-<cpu>, an optional
// dependency npm installs only where its os, cpu and libc match), passing the arguments, stdio,
// signals and exit status through. Nothing is downloaded, at install time or ever: the binary
// came inside the platform package's tarball.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

/** npm's `${process.platform}-${process.arch}` → the package holding that binary. */
const PLATFORMS = {
  "linux-x64": "chromate-mcp-linux-x64",
  "linux-arm64": "chromate-mcp-linux-arm64",
  "darwin-x64": "chromate-mcp-darwin-x64",
  "darwin-arm64": "chromate-mcp-darwin-arm64",
};

function fail(message) {
  process.stderr.write(`chromate-mcp: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PLATFORMS[platform];
  if (name === undefined) {
    fail(
      `no prebuilt chromate for ${platform} (there are: ${Object.keys(PLATFORMS).join(", ")}); ` +
        "build it with `cargo install chromate-mcp`",
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(
      `${name}, the package with the binary for ${platform}, is not installed: ` +
        "reinstall chromate-mcp with optional dependencies (no --omit=optional or --no-optional), " +
        "or use `cargo install chromate-mcp`",
    );
  }
  return path.join(dir, "bin", "chromate");
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => fail(`cannot run ${child.spawnfile}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // Die of the same signal, so whoever started us sees how the binary ended.
    for (const forwardedSignal of forwarded) process.removeAllListeners(forwardedSignal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
