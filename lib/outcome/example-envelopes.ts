// The source article's example of an unknown outcome (docs/outcome-model.md): a write that timed out and may have
// landed. The first-run curl sends it, and the adapters' tests read it; one copy.

export const outcomeUnknownExample = {
  ok: false,
  code: "OUTCOME_UNKNOWN",
  category: "dependency",
  commit_state: "unknown",
  retry: { directive: "never", max_attempts_remaining: 0 },
  next_action: "verify_operation",
  operation_ref: "run_81/step_4",
  agent_message: "The write may have completed. Verify operation_ref before any new write.",
  user_message: "The request is being checked before anything is sent again.",
};
