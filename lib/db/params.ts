/**
 * Bound parameters for a statement composed of optional conditions: `bind(value)` adds a value and
 * answers its placeholder (`$3`), so request data goes in `params`, never into the SQL text.
 */
export function boundParams(initial: unknown[] = []): { params: unknown[]; bind: (value: unknown) => string } {
  const params = [...initial];
  return {
    params,
    bind: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}
