import { actionMeta, consoleActionOrder, type ConsoleAction } from "../actions/action-meta";

// The queue's keyboard: moving and selecting, then one key per action as
// the rest of the console names them. A key the queue needs for itself
// (x selects) is not also an action here.

export const navigationKeys: Array<{ keys: string[]; what: string }> = [
  { keys: ["j"], what: "Next row" },
  { keys: ["k"], what: "Previous row" },
  { keys: ["Enter"], what: "Open the invocation" },
  { keys: ["x"], what: "Select or unselect the row (Shift-click a checkbox selects a range)" },
  { keys: ["Esc"], what: "Clear the selection" },
  { keys: ["/"], what: "Search" },
  { keys: ["?"], what: "This help" },
];

const reserved = new Set(navigationKeys.flatMap((k) => k.keys.map((key) => key.toLowerCase())));

/** The key that opens an action on the focused row, or null when the queue uses that key itself. */
export function queueKeyFor(action: ConsoleAction): string | null {
  const key = actionMeta[action].key;
  return reserved.has(key.toLowerCase()) ? null : key;
}

export function actionForKey(key: string): ConsoleAction | null {
  return consoleActionOrder.find((a) => queueKeyFor(a) === key) ?? null;
}

/** Whether a key press belongs to what the person is typing or to a widget, not to the queue. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target.closest("[role=dialog], [role=menu], [role=listbox]")) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  const type = (target as HTMLInputElement).type;
  return !["checkbox", "radio", "button", "submit", "reset"].includes(type);
}
