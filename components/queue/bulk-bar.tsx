"use client";

import { actionMeta } from "../actions/action-meta";
import { QUEUE_IDS_LIMIT } from "@/lib/queue/filters";
import { Button } from "../ui/button";
import { countText } from "./count-text";

/** What the queue offers in bulk (the API allows the same; claim is assign to oneself). */
export type BulkChoice = "claim" | "assign" | "escalate" | "request_verification" | "comment";
export const bulkChoices: BulkChoice[] = ["claim", "assign", "request_verification", "escalate", "comment"];

type Props = {
  count: number;
  changed: number;
  shown: number;
  allShownSelected: boolean;
  total: number;
  /** `total` is a lower bound: more than that many match. */
  totalCapped: boolean;
  selectingAll: boolean;
  truncatedAt: number | null;
  onSelectShown: (select: boolean) => void;
  onSelectAllMatching: () => void;
  onClear: () => void;
  onChoose: (action: BulkChoice) => void;
};

/**
 * Says up front how many "select all" will select: every match, or — past
 * 5,000, and whenever the count stopped at its cap — the first 5,000 of them.
 */
function selectAllLabel(total: number, capped: boolean): string {
  if (capped || total > QUEUE_IDS_LIMIT)
    return `Select the first ${QUEUE_IDS_LIMIT.toLocaleString()} of ${countText(total, capped)} matching this filter`;
  return `Select all ${total.toLocaleString()} matching this filter`;
}

/** What is selected, and what can be done to all of it at once. */
export function BulkBar({
  count,
  changed,
  shown,
  allShownSelected,
  total,
  totalCapped,
  selectingAll,
  truncatedAt,
  onSelectShown,
  onSelectAllMatching,
  onClear,
  onChoose,
}: Props) {
  return (
    <div
      className="flex flex-wrap items-center gap-x-4 gap-y-2 border-b border-slate-200 bg-white px-3 py-2 text-sm"
      role="region"
      aria-label="Selection"
    >
      <label className="flex items-center gap-2 text-slate-700">
        <input
          type="checkbox"
          className="h-4 w-4"
          checked={allShownSelected && shown > 0}
          disabled={shown === 0}
          onChange={(e) => onSelectShown(e.target.checked)}
        />
        Select all {shown} shown
      </label>
      {count > 0 ? (
        <>
          <span className="font-medium" data-testid="selection-count">
            {count} selected
          </span>
          {changed > 0 ? (
            <span className="text-xs text-amber-800">
              {changed} changed since you selected {changed === 1 ? "it" : "them"} — {changed === 1 ? "it" : "they"}{" "}
              will be refused, not overwritten
            </span>
          ) : null}
          {allShownSelected && (total > count || totalCapped) && truncatedAt === null ? (
            <Button
              size="sm"
              variant="ghost"
              onClick={onSelectAllMatching}
              disabled={selectingAll}
              className="underline"
            >
              {selectingAll ? "Selecting…" : selectAllLabel(total, totalCapped)}
            </Button>
          ) : null}
          {truncatedAt ? (
            <span className="text-xs text-slate-600" data-testid="selection-truncated">
              (the first {truncatedAt.toLocaleString()} of {countText(Math.max(total, truncatedAt), totalCapped)}{" "}
              matching, in queue order)
            </span>
          ) : null}
          <div className="ml-auto flex flex-wrap gap-1.5">
            {bulkChoices.map((a) => (
              <Button key={a} size="sm" onClick={() => onChoose(a)}>
                {actionMeta[a].label}
              </Button>
            ))}
            <Button size="sm" variant="ghost" onClick={onClear}>
              Clear
            </Button>
          </div>
        </>
      ) : (
        <span className="text-xs text-slate-500">
          Select rows (x, or Shift-click a range) to claim, assign, verify, escalate or comment on many at once.
        </span>
      )}
    </div>
  );
}
