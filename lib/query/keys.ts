// TanStack Query key factory: every query key in the console comes from here,
// so invalidation after a mutation names exactly what it touched.
export const queryKeys = {
  invocations: {
    all: ["invocations"] as const,
    recent: () => [...queryKeys.invocations.all, "recent"] as const,
  },
};
