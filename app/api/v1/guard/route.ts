import { otherMethods, withRoute } from "@/lib/http/route";
import { guardRequestSchema, guardWrite, guardAnswerSchema } from "@/lib/guard/guard";

// Asked by a runtime before a write: allows it and records the intent, or
// denies it (already committed, outcome unknown, in flight). Always 200.
export const POST = withRoute({
  auth: "runtime",
  hot: true,
  summary: "Ask before a write; an allowed write's intent is recorded",
  description:
    "docs/outcome-model.md §5, source article 004 (docs/outcome-model.md). Looks at every invocation of the runtime with the idempotency key: committed → already_committed; unknown, partial, stalled, verifying or escalated → outcome_unknown; pending, awaiting approval, retry_scheduled before not_before, or approved under another invocation → in_flight. Otherwise allows and records an `intent` (the next attempt of the invocation named, or of an approved or settled-not-committed one of the task with this key, or of a new invocation `task_id:idempotency_key`), so the invocation is pending. With arguments (or args_digest), a write under a new key whose arguments match an invocation of the same tool that is committed, unknown or in flight, inside the duplicate window of its effect class, is denied as possible_duplicate (naming that invocation) unless an operator marked the pair not a duplicate. Denials are answered 200 too; each is a duplicate prevented. 409 TRANSITION_REFUSED names a rejected invocation; 400 an invocation that carries another key.",
  tags: ["Guard"],
  errors: ["TRANSITION_REFUSED"],
  response: guardAnswerSchema,
  body: guardRequestSchema,
  // A person approves these and the digest reads them: an integer past 2^53 keeps every digit (lib/json).
  exactIn: ["arguments", "envelope"],
  handler: ({ db, principal, body }) => guardWrite(db, principal.runtime, body, new Date()),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
