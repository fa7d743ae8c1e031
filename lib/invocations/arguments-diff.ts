// What an approver changed when they approved with edits: the two argument sets compared member by member,
// for the audit entry and the timeline (stored), and for the console's dialog before it sends them (the same
// function, so the approver sees the diff the audit keeps). Pure and browser-safe: no I/O, no hashing.

/** One change: `before` absent means the member was added, `after` absent that it was removed. */
export type ArgumentChange = { path: string; before?: unknown; after?: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameValue(a[k], b[k]));
  }
  return false;
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/** Changed members, objects walked into (arrays compared whole), in the order the keys first appear. */
export function diffArguments(before: unknown, after: unknown, path = ""): ArgumentChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((k) => {
      if (!(k in after)) return [{ path: join(path, k), before: before[k] }];
      if (!(k in before)) return [{ path: join(path, k), after: after[k] }];
      return diffArguments(before[k], after[k], join(path, k));
    });
  }
  return sameValue(before, after) ? [] : [{ path: path === "" ? "(arguments)" : path, before, after }];
}
