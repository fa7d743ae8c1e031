"use client";

import dynamic from "next/dynamic";
import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import type { BulkTarget } from "@/lib/queue/bulk-actions";
import type { InvocationSummary } from "@/lib/invocations/read";
import type { QueueFilterKey } from "@/lib/queue/filters";

import { actionsFor, type ConsoleAction } from "../actions/action-meta";
import { api } from "../api";
import { useCan, useCurrentUser } from "../current-user";
import { Button } from "../ui/button";
import { BulkBar } from "./bulk-bar";
import type { BulkChoice } from "./bulk-bar";
import { NoMatch, NothingReported, QueueClear } from "./empty-states";
import {
  filterParams,
  filterQuery,
  invocationHref,
  isFiltered,
  readFilters,
  rowKey,
  type QueueFilterState,
} from "./filters";
import { QueueFilters } from "./queue-filters";
import { countText } from "./count-text";
import { QueueTable } from "./queue-table";
import { SavedViews } from "./saved-views";
import { LIVE_INTERVAL_MS, useAnyReported, useQueue, type InitialQueue } from "./use-queue";
import { useQueueKeyboard } from "./use-queue-keyboard";

// Dialogs load when first opened: they are not part of the queue's first paint.
const ActionDialog = dynamic(() => import("../actions/action-dialog").then((m) => m.ActionDialog), { ssr: false });
const BulkDialog = dynamic(() => import("./bulk-dialog").then((m) => m.BulkDialog), { ssr: false });
const KeyboardHelp = dynamic(() => import("./keyboard-help").then((m) => m.KeyboardHelp), { ssr: false });

type Props = { initial: InitialQueue | null; anyReported: boolean; runtimes: string[]; curl: string };

const rowElement = (key: string) => document.querySelector<HTMLTableRowElement>(`tr[data-key="${CSS.escape(key)}"]`);

export function QueueView({ initial, anyReported, runtimes, curl }: Props) {
  const me = useCurrentUser();
  const canAct = useCan("act");
  const router = useRouter();
  const searchParams = useSearchParams();
  const filters = useMemo(() => readFilters(searchParams), [searchParams]);
  const current = filterQuery(filters);
  const queue = useQueue(filters, initial);
  const reported = useAnyReported(queue.loaded && queue.items.length === 0, anyReported);

  const [selected, setSelected] = useState<Map<string, BulkTarget>>(() => new Map());
  const [anchor, setAnchor] = useState<string | null>(null);
  const [truncatedAt, setTruncatedAt] = useState<number | null>(null);
  const [selectingAll, setSelectingAll] = useState(false);
  const [focusedKey, setFocusedKey] = useState<string | null>(null);
  const [single, setSingle] = useState<{ row: InvocationSummary; action: ConsoleAction } | null>(null);
  const [bulk, setBulk] = useState<BulkChoice | null>(null);
  const [help, setHelp] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);
  const lastIndex = useRef(0);

  const items = queue.items;
  const keys = useMemo(() => items.map(rowKey), [items]);
  const byKey = useMemo(() => new Map(items.map((r) => [rowKey(r), r])), [items]);
  const selectedKeys = useMemo(() => new Set(selected.keys()), [selected]);

  const clearSelection = useCallback(() => {
    setSelected(new Map());
    setAnchor(null);
    setTruncatedAt(null);
  }, []);

  const applyQuery = useCallback(
    (query: string, how: "push" | "replace" = "push") => {
      if (query === current) return;
      const url = query ? `/?${query}` : "/";
      window.history[how === "push" ? "pushState" : "replaceState"](null, "", url);
      clearSelection();
    },
    [current, clearSelection],
  );

  // Two changes in quick succession (runtime, then age) must both land: until the URL of the
  // first has rendered, the second builds on what was asked for, not on the URL still shown.
  const requested = useRef<QueueFilterState | null>(null);
  useEffect(() => {
    requested.current = null;
  }, [filters]);
  const setFilters = useCallback(
    (patch: Partial<Record<QueueFilterKey, string | undefined>>, how: "push" | "replace" = "push") => {
      const next: QueueFilterState = { ...(requested.current ?? filters), ...patch };
      requested.current = next;
      applyQuery(filterQuery(next), how);
    },
    [filters, applyQuery],
  );

  // A row that leaves the queue (settled, or by someone else) hands focus to the one that took its place.
  useEffect(() => {
    if (focusedKey === null) return;
    const index = keys.indexOf(focusedKey);
    if (index >= 0) {
      lastIndex.current = index;
      return;
    }
    const next = keys[Math.min(lastIndex.current, keys.length - 1)] ?? null;
    const hadFocus = document.activeElement === document.body || document.activeElement?.tagName === "TR";
    setFocusedKey(next);
    if (next && hadFocus) requestAnimationFrame(() => rowElement(next)?.focus({ preventScroll: true }));
  }, [keys, focusedKey]);

  const focusRow = useCallback((key: string) => {
    setFocusedKey(key);
    const el = rowElement(key);
    el?.focus({ preventScroll: true });
    el?.scrollIntoView({ block: "nearest" });
  }, []);

  const toggle = useCallback(
    (key: string, range = false) => {
      setSelected((prev) => {
        const next = new Map(prev);
        const turnOn = !prev.has(key);
        const span =
          range && anchor && keys.includes(anchor)
            ? keys.slice(
                Math.min(keys.indexOf(anchor), keys.indexOf(key)),
                Math.max(keys.indexOf(anchor), keys.indexOf(key)) + 1,
              )
            : [key];
        for (const k of span) {
          const row = byKey.get(k);
          if (!row) continue;
          if (turnOn)
            next.set(
              k,
              prev.get(k) ?? { invocation_id: row.invocation_id, runtime: row.runtime, version: row.version },
            );
          else next.delete(k);
        }
        return next;
      });
      setAnchor(key);
      setTruncatedAt(null);
    },
    [anchor, keys, byKey],
  );

  const onToggle = useCallback((key: string, event: MouseEvent) => toggle(key, event.shiftKey), [toggle]);
  const onAction = useCallback((row: InvocationSummary, action: ConsoleAction) => setSingle({ row, action }), []);

  const selectShown = (on: boolean) => {
    if (!on) return clearSelection();
    setSelected(
      (prev) =>
        new Map([
          ...prev,
          ...items
            .filter((r) => !prev.has(rowKey(r)))
            .map(
              (r) => [rowKey(r), { invocation_id: r.invocation_id, runtime: r.runtime, version: r.version }] as const,
            ),
        ]),
    );
  };

  const selectAllMatching = async () => {
    setSelectingAll(true);
    try {
      const res = await api.get("/api/v1/queue/ids", { query: filterParams(filters) });
      setSelected(new Map(res.items.map((t) => [rowKey(t), t])));
      setTruncatedAt(res.truncated ? res.items.length : null);
    } finally {
      setSelectingAll(false);
    }
  };

  const focused = focusedKey ? byKey.get(focusedKey) : undefined;
  useQueueKeyboard({
    move: (delta) => {
      if (keys.length === 0) return;
      const at = focusedKey ? keys.indexOf(focusedKey) : -1;
      const next = at < 0 ? 0 : Math.max(0, Math.min(keys.length - 1, at + delta));
      focusRow(keys[next]!);
    },
    open: () => {
      if (focused) router.push(invocationHref(focused.invocation_id, focused.runtime));
    },
    toggle: () => {
      if (focusedKey && canAct) toggle(focusedKey);
    },
    clear: clearSelection,
    search: () => searchRef.current?.focus(),
    help: () => setHelp(true),
    act: (action) => {
      if (focused && canAct && actionsFor(focused.status, focused.assignee, me.email).includes(action))
        setSingle({ row: focused, action });
    },
  });

  const changed = [...selected].filter(([k, t]) => byKey.has(k) && byKey.get(k)!.version !== t.version).length;
  const allShownSelected = items.length > 0 && items.every((r) => selected.has(rowKey(r)));
  // Says what the number counts: the queue, the queue narrowed down, or a chosen set of statuses.
  const heading =
    filters.status === "all"
      ? "invocations, settled ones too"
      : filters.status
        ? "match"
        : isFiltered(filters)
          ? "need a person · filtered"
          : "need a person";

  return (
    <main className="console-frame space-y-3 py-5">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-lg font-semibold">
          Queue{" "}
          <span className="font-normal text-slate-600" data-testid="queue-total">
            · {countText(queue.total, queue.totalCapped)} {heading}
          </span>
        </h1>
        <div className="flex items-center gap-3 text-xs text-slate-500">
          {queue.error ? (
            <span role="alert" className="text-rose-700">
              Not refreshing: {queue.error.message}
            </span>
          ) : (
            <span>
              <span
                aria-hidden="true"
                className={`mr-1 inline-block h-2 w-2 rounded-full ${queue.isFetching ? "bg-sky-500" : "bg-emerald-500"}`}
              />
              Live · refreshes every {LIVE_INTERVAL_MS / 1000} s
            </span>
          )}
          <Button size="sm" variant="ghost" onClick={() => setHelp(true)} aria-keyshortcuts="?">
            Keyboard <kbd className="rounded border border-slate-300 px-1 font-mono text-[10px]">?</kbd>
          </Button>
        </div>
      </div>
      <SavedViews current={current} onApply={(q) => applyQuery(q)} />
      <QueueFilters
        filters={filters}
        runtimes={runtimes}
        tools={[...new Set(items.map((r) => r.tool))].sort()}
        searchRef={searchRef}
        onChange={setFilters}
        onClear={() => applyQuery("")}
      />
      <section aria-label="Invocations" className="rounded-lg border border-slate-200 bg-white shadow-sm">
        {canAct ? (
          <BulkBar
            count={selected.size}
            changed={changed}
            shown={items.length}
            allShownSelected={allShownSelected}
            total={queue.total}
            totalCapped={queue.totalCapped}
            selectingAll={selectingAll}
            truncatedAt={truncatedAt}
            onSelectShown={selectShown}
            onSelectAllMatching={() => void selectAllMatching()}
            onClear={clearSelection}
            onChoose={setBulk}
          />
        ) : null}
        {queue.loaded && items.length === 0 ? (
          !reported ? (
            <NothingReported curl={curl} isAdmin={me.role === "admin"} />
          ) : isFiltered(filters) ? (
            <NoMatch onClear={() => applyQuery("")} />
          ) : (
            <QueueClear />
          )
        ) : (
          <QueueTable
            items={items}
            asOf={queue.asOf}
            me={me.email}
            canAct={canAct}
            selected={selectedKeys}
            focusedKey={focusedKey}
            onFocusRow={setFocusedKey}
            onToggle={onToggle}
            onAction={onAction}
            onOpen={(row) => router.push(invocationHref(row.invocation_id, row.runtime))}
          />
        )}
        {queue.hasNextPage ? (
          <div className="border-t border-slate-100 p-2 text-center">
            <Button size="sm" onClick={() => void queue.fetchNextPage()} disabled={queue.isFetchingNextPage}>
              {queue.isFetchingNextPage
                ? "Loading…"
                : `Show more (${countText(queue.total - items.length, queue.totalCapped)} not shown)`}
            </Button>
          </div>
        ) : null}
      </section>
      <p id="queue-keys-hint" className="sr-only">
        j and k move between rows, Enter opens one, x selects it; press question mark for every shortcut.
      </p>
      {single ? (
        <ActionDialog
          target={{
            invocation_id: single.row.invocation_id,
            runtime: single.row.runtime,
            version: single.row.version,
            status: single.row.status,
            tool: single.row.tool,
            summary: single.row.summary,
          }}
          action={single.action}
          onClose={() => setSingle(null)}
        />
      ) : null}
      {bulk ? (
        <BulkDialog
          action={bulk}
          targets={[...selected.values()]}
          onClose={(finished) => {
            setBulk(null);
            if (finished) clearSelection();
          }}
        />
      ) : null}
      {help ? <KeyboardHelp open onClose={() => setHelp(false)} canAct={canAct} /> : null}
    </main>
  );
}
