/** A count as the console shows it: "10,000+" when counting stopped at its cap (more than that match). */
export function countText(total: number, capped: boolean): string {
  return `${Math.max(0, total).toLocaleString()}${capped ? "+" : ""}`;
}
