// The metrics page's filters as they live in the URL: a preset range (24h,
// 7d, 30d) ending now, or a custom one of whole UTC days; tool and runtime.
// No zod: plain parsing shared by the page and the case list.

export const presets = { "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 } as const;
export type Preset = keyof typeof presets;

export type MetricsParams = { range: Preset | "custom"; from: string; to: string; tool: string; runtime: string };
type Search = Record<string, string | string[] | undefined>;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() ?? "";
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Reads the URL; a custom range's `to` day is included (its end is the next midnight). */
export function readMetricsParams(search: Search, now: Date): { params: MetricsParams; from: Date; to: Date } {
  const tool = first(search.tool);
  const runtime = first(search.runtime);
  const range = first(search.range);
  const fromDay = first(search.from);
  const toDay = first(search.to);
  if (range === "custom" && DAY.test(fromDay) && DAY.test(toDay)) {
    const from = new Date(`${fromDay}T00:00:00Z`);
    const to = new Date(Date.parse(`${toDay}T00:00:00Z`) + 86_400_000);
    if (!Number.isNaN(from.getTime()) && !Number.isNaN(to.getTime()) && from < to) {
      return { params: { range: "custom", from: fromDay, to: toDay, tool, runtime }, from, to };
    }
  }
  const preset: Preset = range in presets ? (range as Preset) : "24h";
  const to = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  const from = new Date(to.getTime() - presets[preset]);
  return {
    params: { range: preset, from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10), tool, runtime },
    from,
    to,
  };
}

/** The query that names exactly this range and these filters (for the API, the CSV and the case lists). */
export function apiQuery(
  from: Date,
  to: Date,
  tool: string,
  runtime: string,
  extra: Record<string, string> = {},
): string {
  const q = new URLSearchParams({ from: from.toISOString(), to: to.toISOString() });
  if (tool) q.set("tool", tool);
  if (runtime) q.set("runtime", runtime);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return q.toString();
}
