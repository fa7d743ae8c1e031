// `import "server-only"` marks modules that must never reach the browser: Next.js
// resolves it to nothing on the server and fails the build in a client component.
// Outside Next.js (the CLI, benchmarks) there is no browser to guard, so it resolves
// to an empty module here too. Load with `node --import ./scripts/server-only-off.mjs`,
// or import this file before anything that imports lib/.
import { register } from "node:module";

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true };
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url);
