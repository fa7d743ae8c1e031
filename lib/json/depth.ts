// How deep caller data nests, measured without recursion. JSON.parse reads
// any depth, but every walk after it (redaction, cleaning strings, hashing a
// record, zod) recurses: a value nested thousands deep would overflow the
// stack, sooner or later depending on how deep the stack already was. So the
// depth is checked here, iteratively, right after parsing and before any walk.

/** The most levels of arrays and objects a JSON body, or one ingest record, may nest. */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether `value` nests more than `max` levels of arrays and objects (a
 * scalar is 0 levels, `[]` and `{}` are 1). Stops at the first level past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (max < 1) return true;
  // Two stacks side by side, not one of pairs: no allocation per value on the ingest path.
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop()!;
    const depth = depths.pop()!;
    const items: unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (let i = 0; i < items.length; i += 1) {
      const item = items[i];
      if (typeof item !== "object" || item === null) continue;
      if (depth + 1 > max) return true;
      values.push(item);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** The first of an object's members that nests deeper than `max` levels inside it, or null. */
export function tooDeepMember(value: Record<string, unknown>, max: number): string | null {
  for (const key of Object.keys(value)) {
    if (nestsDeeperThan(value[key], max - 1)) return key;
  }
  return null;
}
