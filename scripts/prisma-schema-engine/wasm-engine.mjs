// Loads Prisma's WebAssembly schema engine, the same way prisma 6.x did in
// packages/internals/src/WasmSchemaEngineLoader.ts.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

// The CLI ships the engine build that matches its own release
// (prisma/build/schema_engine_bg.wasm), but not the wasm-bindgen glue for it;
// the pinned @prisma/schema-engine-wasm package provides compatible glue.
// Prefer the CLI's build so migrations match what this Prisma version writes.
function wasmCandidates() {
  const prismaDir = path.dirname(require.resolve("prisma/package.json"));
  const glueWasm = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg").replace(/\.js$/, ".wasm");
  return [path.join(prismaDir, "build", "schema_engine_bg.wasm"), glueWasm];
}

let glue;
let panicMessage;

// The engine's panic hook reports the Rust panic message here just before
// trapping (prisma 6.x installed the same registry in @prisma/internals);
// without it the hook itself throws and the real message is lost.
globalThis.PRISMA_WASM_PANIC_REGISTRY ??= {
  set_message(message) {
    panicMessage = message;
  },
};

/** The message of the last Rust panic, if any. */
export function takePanicMessage() {
  const message = panicMessage;
  panicMessage = undefined;
  return message;
}

async function loadGlue() {
  if (glue) return glue;
  const runtime = await import("@prisma/schema-engine-wasm/schema_engine_bg");
  for (const file of wasmCandidates()) {
    if (!fs.existsSync(file)) continue;
    const wasmModule = new WebAssembly.Module(fs.readFileSync(file));
    // After a version bump the glue and the CLI's wasm may stop matching;
    // detect that up front instead of failing later with a LinkError.
    const missing = WebAssembly.Module.imports(wasmModule).filter((i) => !(i.name in runtime));
    if (missing.length > 0) continue;
    const instance = new WebAssembly.Instance(wasmModule, { "./schema_engine_bg.js": runtime });
    runtime.__wbg_set_wasm(instance.exports);
    instance.exports.__wbindgen_start();
    glue = runtime;
    return glue;
  }
  throw new Error(
    "No schema_engine_bg.wasm compatible with @prisma/schema-engine-wasm was found " +
      "(prisma, @prisma/schema-engine-wasm and the driver adapter packages must be pinned together).",
  );
}

export async function engineVersion() {
  return (await loadGlue()).version();
}

/**
 * @param {[string, string][] | undefined} datamodels [path, content] pairs
 * @param {(line: string) => void} log receives JSON tracing records
 * @param {object} adapterFactory an error-capturing, migration-aware adapter factory
 */
export async function createEngine(datamodels, log, adapterFactory) {
  const { SchemaEngine } = await loadGlue();
  return SchemaEngine.new({ datamodels }, log, adapterFactory);
}
