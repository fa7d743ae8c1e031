"use client";

import { lazy, Suspense, useState } from "react";
import { actionsFor } from "../actions/action-meta";
import { triggerClass, triggerLabel, type RowActionsProps } from "./row-trigger";

// The row's Actions button. The menu behind it (Radix) loads when a person first opens one and opens at
// once then; until it is there, the same button stands in its place. The queue's first load stays small.
const RowMenu = lazy(() => import("./row-menu").then((m) => ({ default: m.RowMenu })));

function Trigger({ props, onOpen }: { props: RowActionsProps; onOpen?: () => void }) {
  return (
    <button
      type="button"
      aria-haspopup="menu"
      aria-expanded={false}
      aria-label={triggerLabel(props.row)}
      className={triggerClass}
      onClick={onOpen}
      onKeyDown={(e) => {
        if (onOpen && (e.key === "ArrowDown" || e.key === "Enter" || e.key === " ")) {
          e.preventDefault();
          onOpen();
        }
      }}
    >
      Actions <span aria-hidden="true">▾</span>
    </button>
  );
}

export function RowActions(props: RowActionsProps) {
  const [opened, setOpened] = useState(false);
  if (actionsFor(props.row.status, props.row.assignee, props.me).length === 0) return null;
  if (!opened) return <Trigger props={props} onOpen={() => setOpened(true)} />;
  return (
    <Suspense fallback={<Trigger props={props} />}>
      <RowMenu {...props} />
    </Suspense>
  );
}
