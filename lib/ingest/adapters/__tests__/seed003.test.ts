import { describe, it } from "vitest";
import { check, type Case } from "./helpers";

// source article 003 (docs/outcome-model.md) ("Tool errors: how an agent recovers and when it must stop").
const notFound = {
  kind: "tool_error",
  version: 1,
  is_error: true,
  error: "not_found",
  message: "No hay registro para esa fecha. No implica que no haya registros en otras fechas.",
  recovery: "choose_alternative",
  recoverable: true,
};

const cases: Case[] = [
  {
    name: "the article's not_found on a read: choose an alternative",
    envelope: notFound,
    read: true,
    expect: {
      dialect: "seed003",
      commit_state: "not_committed",
      next_action: "choose_alternative",
      code: "not_found",
      agent_message: notFound.message,
      safe_details: { recovery: "choose_alternative", recoverable: true },
    },
  },
  {
    name: "correct_arguments: the handler never ran",
    envelope: { ...notFound, error: "invalid_arguments", recovery: "correct_arguments" },
    expect: { commit_state: "not_committed", next_action: "correct_input", category: "validation" },
  },
  {
    name: "stop_turn on a write: completion cannot be confirmed",
    envelope: {
      ...notFound,
      error: "persistence_failed",
      message: "network timeout",
      recovery: "stop_turn",
      recoverable: false,
    },
    expect: { commit_state: "unknown", next_action: "verify_operation", outcome: "unknown" },
  },
  {
    name: "stop_turn on a read: nothing changed",
    envelope: { ...notFound, recovery: "stop_turn" },
    read: true,
    expect: { commit_state: "not_committed" },
  },
];

describe("source article 003 (docs/outcome-model.md) adapter", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
