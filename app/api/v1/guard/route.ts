import { otherMethods, withRoute } from "@/lib/http/route";
import { guardRequestSchema, guardWrite, guardAnswerSchema } from "@/lib/guard/guard";

// Asked by a runtime before a write: allows it and records the intent, or
// denies it (already committed, outcome unknown, in flight). Always 200.
export const POST = withRoute({
  auth: "runtime",
  hot: true,
  summary: "Ask before a write; an allowed write's intent is recorded",
  description:
    "SPEC §5, seed 004. Looks at every invocation of the runtime with the idempotency key: committed → already_committed; unknown, partial, stalled, verifying or escalated → outcome_unknown; pending, awaiting approval, retry_scheduled before not_before, or approved under another invocation → in_flight. Otherwise allows and records an `intent` (the next attempt of the invocation named, or of an approved or settled-not-committed one of the task with this key, or of a new invocation `task_id:idempotency_key`), so the invocation is pending. Denials are answered 200 too; each is a duplicate prevented. 409 TRANSITION_REFUSED names a rejected invocation; 400 an invocation that carries another key.",
  tags: ["Guard"],
  errors: ["TRANSITION_REFUSED"],
  response: guardAnswerSchema,
  body: guardRequestSchema,
  handler: ({ db, principal, body }) => guardWrite(db, principal.runtime, body),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
