#!/usr/bin/env node
// Stands in for Prisma's native `schema-engine` binary, which cannot be
// downloaded here: point PRISMA_SCHEMA_ENGINE_BINARY at this file and the
// Prisma CLI drives Prisma's WebAssembly schema engine through it.
// See docs/decisions/002-prisma-schema-engine-bridge.md.
import fs from "node:fs";
import path from "node:path";

function parseArgs(argv) {
  const options = { datamodels: [], datasource: {}, cli: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--datamodels" || arg === "-d") options.datamodels.push(value());
    else if (arg === "--datasource") options.datasource = JSON.parse(value());
    // Preview features and extension types change nothing for PostgreSQL
    // migrations in this project; accepted so the CLI's spawn line is valid.
    else if (arg === "--enabled-preview-features" || arg === "--extension-types") value();
    else if (arg === "cli") {
      options.cli = argv[i + 1];
      break;
    } else if (arg === "--version" || arg === "-V") options.version = true;
    else if (arg === "--help" || arg === "-h") options.help = true;
    else throw new Error(`Unknown argument: ${arg}`);
  }
  return options;
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`schema-engine bridge: ${error.message}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write("Usage: bridge.mjs [--datamodels FILE]... [--datasource JSON] [cli COMMAND]\n");
    return 0;
  }
  if (options.version) {
    const { engineVersion } = await import("./wasm-engine.mjs");
    process.stdout.write(`schema-engine-cli ${await engineVersion()} (wasm bridge)\n`);
    return 0;
  }
  if (options.cli) {
    const { runOneShot } = await import("./oneshot.mjs");
    return runOneShot(options.cli, options.datasource);
  }
  const datamodels = options.datamodels.length
    ? options.datamodels.map((file) => [file, fs.readFileSync(path.resolve(file), "utf8")])
    : undefined;
  const { serve } = await import("./server.mjs");
  await serve({ datamodels, datasource: options.datasource });
  return undefined;
}

const code = await main();
if (code !== undefined) process.exit(code);
