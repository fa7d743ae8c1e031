// One way to show a time everywhere in the audit and admin screens: UTC, to
// the second, the same on the server and in every browser (no hydration drift,
// no guessing which time zone a colleague's screenshot was in).

export function formatUtc(iso: string | null, { seconds = true }: { seconds?: boolean } = {}): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d
    .toISOString()
    .slice(0, seconds ? 19 : 16)
    .replace("T", " ")} UTC`;
}
