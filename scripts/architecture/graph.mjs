// The import graph between Settle's layers, read from the source: every
// import, export-from and import() of every non-test file, type-only ones
// included, resolved to the unit (folder or file) of docs/architecture.md's
// table that it lands in. Used by the architecture check and the doc generator.
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import path from "node:path";
import { units } from "./layers.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const SOURCE = /\.(ts|tsx|mjs)$/;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "generated" || name.startsWith(".")) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (SOURCE.test(name) && !/\.test\.tsx?$/.test(name) && !full.includes(`${path.sep}__tests__${path.sep}`))
      out.push(full);
  }
  return out;
}

/** The unit a repository path (relative, with /) belongs to: the first whose pattern matches, most specific listed first. */
export function unitOf(rel) {
  for (const unit of units)
    if (unit.match.some((m) => (m.endsWith("/") ? rel.startsWith(m) : rel === m))) return unit.name;
  return null;
}

function resolveImport(fromFile, spec) {
  let base;
  if (spec.startsWith("@/")) base = path.join(ROOT, spec.slice(2));
  else if (spec.startsWith(".")) base = path.resolve(path.dirname(fromFile), spec);
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}.mjs`, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile())
      return path.relative(ROOT, candidate).split(path.sep).join("/");
  }
  return path.relative(ROOT, base).split(path.sep).join("/");
}

/** Map of unit → Map of unit it imports → the first file:line that does. */
export function importGraph() {
  const edges = new Map();
  const roots = units.flatMap((u) => u.match).map((m) => m.split("/")[0]);
  const files = [...new Set(roots)].flatMap((r) => {
    const full = path.join(ROOT, r);
    if (!existsSync(full)) return [];
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
  for (const file of files) {
    const rel = path.relative(ROOT, file).split(path.sep).join("/");
    const from = unitOf(rel);
    if (!from) continue;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveImport(file, m[1] ?? m[2]);
      const to = target && unitOf(target);
      if (!to || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const line = text.slice(0, m.index).split("\n").length;
      if (!edges.get(from).has(to)) edges.get(from).set(to, `${rel}:${line}`);
    }
  }
  return edges;
}
