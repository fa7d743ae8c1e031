"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useState } from "react";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { Button } from "../ui/button";

// Dialogs load when first opened: they are not part of the queue's first paint.
const SaveViewDialog = dynamic(() => import("./save-view-dialog").then((m) => m.SaveViewDialog), { ssr: false });

// Views: a few everyone has, and the ones this person saved (name → filter).

const builtIn: Array<{ name: string; query: string }> = [
  { name: "Needs a person", query: "" },
  { name: "Unknown or stalled", query: "status=outcome_unknown%2Cstalled" },
  { name: "Mine", query: "assignee=me" },
  { name: "Unassigned", query: "assignee=none" },
  { name: "Everything", query: "status=all" },
];

const chip = (active: boolean) =>
  `inline-flex items-center rounded-full border px-2.5 py-0.5 text-xs font-medium ${active ? "border-slate-900 bg-slate-900 text-white" : "border-slate-300 bg-white text-slate-700 hover:bg-slate-100"}`;

export function SavedViews({ current, onApply }: { current: string; onApply: (query: string) => void }) {
  const queryClient = useQueryClient();
  const [naming, setNaming] = useState(false);
  const views = useQuery({ queryKey: queryKeys.savedViews.all, queryFn: () => api.get("/api/v1/saved-views") });
  const done = () => queryClient.invalidateQueries({ queryKey: queryKeys.savedViews.all });
  const save = useMutation({
    mutationFn: (name: string) => api.post("/api/v1/saved-views", { body: { name, query: current } }),
    onSuccess: () => {
      setNaming(false);
      void done();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete("/api/v1/saved-views/{id}", { params: { id } }),
    onSettled: done,
  });

  return (
    <nav aria-label="Views" className="flex flex-wrap items-center gap-1.5">
      {builtIn.map((v) => (
        <button
          key={v.name}
          type="button"
          className={chip(v.query === current)}
          aria-pressed={v.query === current}
          onClick={() => onApply(v.query)}
        >
          {v.name}
        </button>
      ))}
      {(views.data?.items ?? []).map((v) => (
        <span key={v.id} className={`${chip(v.query === current)} gap-1 pr-1`}>
          <button
            type="button"
            aria-pressed={v.query === current}
            onClick={() => onApply(v.query)}
            data-testid="saved-view"
          >
            {v.name}
          </button>
          <button
            type="button"
            aria-label={`Delete the view ${v.name}`}
            className="rounded-full p-0.5 hover:bg-slate-300/50"
            onClick={() => remove.mutate(v.id)}
          >
            <span aria-hidden="true" className="block h-3 w-3 leading-3">
              ×
            </span>
          </button>
        </span>
      ))}
      <Button size="sm" variant="ghost" onClick={() => setNaming(true)} disabled={current === ""}>
        Save this view…
      </Button>
      {naming ? (
        <SaveViewDialog
          query={current}
          error={save.error?.message ?? null}
          saving={save.isPending}
          onSave={(name) => save.mutate(name)}
          onClose={() => setNaming(false)}
        />
      ) : null}
    </nav>
  );
}
