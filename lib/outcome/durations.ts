// Durations as people write and read them ("2h 5m", "90m", "1d"), for the
// policy page, SLA notes and "escalates in 12m". No zod and no Node APIs: the
// console ships this module to the browser.

const UNITS = [
  ["d", 86_400],
  ["h", 3_600],
  ["m", 60],
  ["s", 1],
] as const;
const UNIT_S: Record<string, number> = Object.fromEntries(UNITS);

/** Whole seconds in the largest unit and the next one: 7500 → "2h 5m", 7200 → "2h", 7201 → "2h", 45 → "45s", 0 → "0s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const i = UNITS.findIndex(([, size]) => s >= size);
  if (i === -1) return "0s";
  const [unit, size] = UNITS[i]!;
  const next = UNITS[i + 1];
  const rest = next ? Math.floor((s % size) / next[1]) : 0;
  return rest > 0 && next ? `${Math.floor(s / size)}${unit} ${rest}${next[0]}` : `${Math.floor(s / size)}${unit}`;
}

/** Every unit, so that parsing it gives the same seconds back: 90_061 → "1d 1h 1m 1s". For form fields. */
export function formatDurationExact(seconds: number): string {
  let left = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
  }
  return parts.length > 0 ? parts.join(" ") : "0s";
}

/**
 * "2h 30m", "90m", "1d 4h", "45s" or a bare number of seconds → seconds.
 * Blank → null (no value). Anything else → undefined (not a duration).
 */
export function parseDuration(text: string): number | null | undefined {
  const t = text.trim().toLowerCase();
  if (t === "") return null;
  if (/^\d{1,9}$/.test(t)) return Number(t);
  const parts = [...t.matchAll(/(\d{1,7})\s*([dhms])/g)];
  const consumed = parts.map((p) => p[0]).join("");
  if (parts.length === 0 || consumed.replace(/\s/g, "") !== t.replace(/\s/g, "")) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_S[p[2]!]!, 0);
}
