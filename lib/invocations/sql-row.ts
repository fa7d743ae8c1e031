// An invocations row as SQL hands it back (snake_case, as selected by `i.*`-style column lists; times as the
// driver gives them), with its runtime's name: one shape for every reader that selects invocations in SQL
// (the queue, the verifier's asks) rather than through Prisma (read.ts).

export type InvocationSqlRow = {
  id: string;
  runtime_id: string;
  runtime: string;
  invocation_id: string;
  task_id: string;
  tool: string;
  effect_class: string | null;
  idempotency_key: string | null;
  status: string;
  commit_state: string;
  next_action: string;
  version: number;
  conflict: boolean;
  attempt_count: number;
  first_seen_at: Date | string;
  last_attempt_at: Date | string;
  status_since: Date | string;
  stall_at: Date | string | null;
  not_before: Date | string | null;
  updated_at: Date | string;
  assignee: string | null;
  user_message: string | null;
  last_code: string | null;
  resolution: unknown;
  args_digest: string | null;
  summary: string | null;
  possible_duplicate_of: string | null;
  duplicate_review: string | null;
  args_review: string | null;
};
