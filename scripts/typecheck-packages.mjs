#!/usr/bin/env node
// Every npm workspace's own `typecheck` script (packages/*: each package is checked on its own terms, with its own
// tsconfig, as the house rule wants), two at a time; one exit status for `npm test`, which counts this as one check.
// A workspace without a `typecheck` script fails here rather than being skipped. They need no build first: each
// development tsconfig reads @settle/client from its sources (decision 046).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

const root = JSON.parse(readFileSync("package.json", "utf8"));
const workspaces = root.workspaces.map((dir) => ({
  dir,
  pkg: JSON.parse(readFileSync(`${dir}/package.json`, "utf8")),
}));

function typecheck({ dir, pkg }) {
  if (!pkg.scripts?.typecheck)
    return Promise.resolve({ name: pkg.name, ok: false, seconds: "0.0", output: `${dir} has no "typecheck" script\n` });
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "-s", "typecheck"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (status) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      resolve({ name: pkg.name, ok: status === 0, seconds, output });
    });
  });
}

const queue = [...workspaces];
const results = [];
const worker = async () => {
  for (let next = queue.shift(); next; next = queue.shift()) {
    const result = await typecheck(next);
    process.stdout.write(
      `${result.ok ? "ok  " : "FAIL"} ${result.name} (${result.seconds}s)\n${result.ok ? "" : result.output}`,
    );
    results.push(result);
  }
};
await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, worker));
process.exit(results.every((r) => r.ok) ? 0 : 1);
