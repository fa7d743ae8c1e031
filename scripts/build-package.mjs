// Builds one of packages/* for npm, run in the package's folder by its
// `build` script: ESM with type declarations in dist/, with --cjs a CommonJS
// copy in dist/cjs/ (its own package.json says so), and the repository's
// licence beside them, since npm packs only what is inside the package folder.
// tsconfig.build.json, not tsconfig.json: the latter is for development and
// reads @settle/client from its sources (decision 046).
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const run = (project) => execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });

rmSync("dist", { recursive: true, force: true });
run("tsconfig.build.json");
if (process.argv.includes("--cjs")) {
  run("tsconfig.cjs.json");
  writeFileSync("dist/cjs/package.json", '{ "type": "commonjs" }\n');
}
copyFileSync(new URL("../LICENSE", import.meta.url), "LICENSE");
