"use client";

import { useEffect, useRef } from "react";
import type { ConsoleAction } from "../actions/action-meta";
import { actionForKey, isTypingTarget } from "./shortcuts";

export type QueueKeyHandlers = {
  move: (delta: 1 | -1) => void;
  open: () => void;
  toggle: () => void;
  clear: () => void;
  search: () => void;
  help: () => void;
  act: (action: ConsoleAction) => void;
};

/** The queue's shortcuts, on the whole page; never while typing, in a menu or with a dialog open. */
export function useQueueKeyboard(handlers: QueueKeyHandlers) {
  const ref = useRef(handlers);
  useEffect(() => {
    ref.current = handlers;
  });

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
      if (isTypingTarget(e.target) || document.querySelector("[role=dialog], [role=menu]")) return;
      const h = ref.current;
      const onRowOrPage = e.target === document.body || (e.target instanceof HTMLElement && e.target.tagName === "TR");
      const run = (fn: () => void) => {
        e.preventDefault();
        fn();
      };
      switch (e.key) {
        case "j":
          return run(() => h.move(1));
        case "k":
          return run(() => h.move(-1));
        case "Enter":
          // Buttons, links and checkboxes answer Enter themselves.
          return onRowOrPage ? run(h.open) : undefined;
        case "x":
          return run(h.toggle);
        case "Escape":
          return h.clear();
        case "/":
          return run(h.search);
        case "?":
          return run(h.help);
        default: {
          const action = e.shiftKey ? null : actionForKey(e.key);
          if (action) run(() => h.act(action));
        }
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}
