// vitals launcher: Claude Desktop runs this with its bundled Node. It restores the executable bit
// (Claude Desktop extracts every file 0600), picks server/bin/<target>/vitals-mcp[.exe] for this
// platform and architecture, and hands it stdio, the environment and signals. No dependencies.
// stdout is the MCP channel: every diagnostic goes to stderr.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const TARGETS = {
  "darwin-arm64": "aarch64-apple-darwin",
  "darwin-x64": "x86_64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
  "linux-x64": "x86_64-unknown-linux-gnu",
  "linux-arm64": "aarch64-unknown-linux-gnu",
};

const key = `${process.platform}-${process.arch}`;
const target = TARGETS[key];
if (!target) {
  console.error(`vitals: this bundle has no server for ${key}; it ships ${Object.keys(TARGETS).join(", ")}`);
  process.exit(1);
}
const exe = process.platform === "win32" ? "vitals-mcp.exe" : "vitals-mcp";
const bin = path.join(__dirname, "bin", target, exe);
if (!fs.existsSync(bin)) {
  console.error(`vitals: ${bin} is missing: this bundle was built without the ${target} server`);
  process.exit(1);
}
if (process.platform !== "win32") {
  try {
    fs.chmodSync(bin, 0o755);
  } catch (e) {
    console.error(`vitals: could not make ${bin} executable: ${e.message}`);
  }
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(s, () => child.kill(s));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
child.on("error", (e) => {
  console.error(`vitals: could not start ${bin}: ${e.message}`);
  process.exit(1);
});
