// Times and durations as an operator reads them. Times are shown in UTC on
// every page, so the server's render and the browser's agree and two people
// comparing notes see the same clock.

export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  const s = Math.round(abs / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

const pad = (n: number) => String(n).padStart(2, "0");
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export function formatClock(iso: string, withDate = false): string {
  const d = new Date(iso);
  const clock = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return withDate ? `${months[d.getUTCMonth()]} ${d.getUTCDate()}, ${clock}` : clock;
}

/** A full date and time, for headers and tooltips. */
export function formatDateTime(iso: string): string {
  return `${formatClock(iso, true)} UTC`;
}

export function spansDays(startIso: string, endIso: string): boolean {
  return startIso.slice(0, 10) !== endIso.slice(0, 10);
}

export function formatAgo(iso: string, now: string): string {
  const ms = Date.parse(now) - Date.parse(iso);
  return ms < 1000 ? "just now" : `${formatDuration(ms)} ago`;
}
