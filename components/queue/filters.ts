import { queueFilterKeys, type QueueFilterKey } from "@/lib/queue/filters";
import type { InvocationStatus } from "@/lib/outcome/status";
import type { NextAction } from "@/lib/outcome/vocabulary";
import { effectClasses } from "@/lib/outcome/queue-order";
import type { Option } from "../ui/field";

// The queue's filter lives in the URL: these read it, write it, and name
// what it holds. Kept free of React so server and client agree on it.

export type QueueFilterState = Partial<Record<QueueFilterKey, string>>;

export function readFilters(search: URLSearchParams | Record<string, string | string[] | undefined>): QueueFilterState {
  const get = (k: string) => {
    const v = search instanceof URLSearchParams ? search.get(k) : search[k];
    return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  };
  const out: QueueFilterState = {};
  for (const k of queueFilterKeys) {
    const v = get(k);
    if (v) out[k] = v;
  }
  return out;
}

/** A filter's values as the API takes them: trimmed, empty ones left out, keys in a fixed order. */
export function filterParams(filters: QueueFilterState): QueueFilterState {
  const params: QueueFilterState = {};
  for (const k of queueFilterKeys) {
    const v = filters[k]?.trim();
    if (v) params[k] = v;
  }
  return params;
}

/** The URL query of a filter, keys in a fixed order so equal filters give equal strings. */
export function filterQuery(filters: QueueFilterState): string {
  return new URLSearchParams(filterParams(filters) as Record<string, string>).toString();
}

export const isFiltered = (filters: QueueFilterState) => queueFilterKeys.some((k) => Boolean(filters[k]));

export const statusOptions: Option[] = [
  { value: "", label: "Needs a person (all)" },
  { value: "outcome_unknown,stalled", label: "Unknown or stalled" },
  { value: "outcome_unknown", label: "Outcome unknown" },
  { value: "stalled", label: "Stalled" },
  { value: "partially_applied", label: "Partially applied" },
  { value: "awaiting_approval", label: "Awaiting approval" },
  { value: "verifying", label: "Verifying" },
  { value: "escalated", label: "Escalated" },
  { value: "all", label: "Everything, settled too" },
];

export const effectClassOptions = [
  { value: "", label: "Any class" },
  ...effectClasses.map((c) => ({ value: c, label: c[0]!.toUpperCase() + c.slice(1) })),
  { value: "unclassified", label: "Unclassified (a write)" },
];

export const ageFilterOptions = [
  { value: "", label: "Any age" },
  { value: "15m", label: "Waiting 15 min +" },
  { value: "1h", label: "Waiting 1 hour +" },
  { value: "4h", label: "Waiting 4 hours +" },
  { value: "1d", label: "Waiting 1 day +" },
  { value: "7d", label: "Waiting 7 days +" },
];

const nextActionWords: Record<NextAction, string> = {
  none: "—",
  correct_input: "Fix the input",
  wait_and_retry: "Wait, then retry",
  verify_operation: "Verify it happened",
  request_approval: "Approve or reject",
  escalate: "Manager decides",
  choose_alternative: "Choose another way",
};

export const nextActionLabel = (n: NextAction) => nextActionWords[n] ?? n;

/** An effect class as shown: a missing or unknown one is treated as a write, and says so. */
export const effectClassLabel = (c: string | null) =>
  c && (effectClasses as readonly string[]).includes(c) ? c : "write (unclassified)";

/** "12m": how long something has been waiting, in its largest whole unit. */
export function formatAge(fromIso: string, nowIso: string): string {
  const s = Math.max(0, Math.floor((Date.parse(nowIso) - Date.parse(fromIso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export const rowKey = (r: { runtime: string; invocation_id: string }) => JSON.stringify([r.runtime, r.invocation_id]);

export function invocationHref(invocationId: string, runtime: string): string {
  return `/invocations/${encodeURIComponent(invocationId)}?runtime=${encodeURIComponent(runtime)}`;
}

export const headline = (s: InvocationStatus) => s === "outcome_unknown" || s === "stalled";
