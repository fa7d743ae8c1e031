// Next.js bundles the routes, the pages, instrumentation and the fast lane
// apart, so a module has one copy per bundle: state that must be one per
// process (the database handle, a cache an edit must clear everywhere at once)
// would silently be several. This keeps each such value on globalThis under one
// name; it is the only place Settle's code keeps state there, and ESLint
// refuses module-level mutable state anywhere else in lib/ and server/.

type Store = Record<string, unknown>;
const root = globalThis as typeof globalThis & { __settle?: Store };

/** The process's one value under `name`, made by `init` the first time any bundle asks. */
export function processWide<T>(name: string, init: () => T): T {
  const store = (root.__settle ??= {});
  if (!Object.hasOwn(store, name)) store[name] = init();
  return store[name] as T;
}
