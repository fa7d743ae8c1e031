import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { findingSchema } from "../outcome/verification";
import { enqueueEvents, selectRuntimesWithEndpoints } from "../webhooks/outbox";
import { answerVerification } from "./answer";
import { takeRequests, verificationItemSchema } from "./lease";
import { selectRuntimeOfRequest, selectRuntimesWithDueRequests } from "./queries";

// Push, for runtimes that cannot keep a worker polling (serverless): a runtime with an enabled webhook endpoint
// gets each due request as a signed `invocation.verification_requested` event through the outbox, leased to
// `webhook` for the entry's lease_s and counted as a try, exactly as a pulling worker's lease would be. A 2xx
// answer whose JSON body is a finding is its answer; any other 2xx means the runtime answers through the API.

export const VERIFICATION_EVENT = "invocation.verification_requested";
export const WEBHOOK_WORKER = "webhook";
const PUSH_BATCH = 100;

export const verificationRequestedEventSchema = z
  .object({
    id: z.string().describe("evt_…, the same on every try of this delivery; one event per ask."),
    type: z.literal(VERIFICATION_EVENT),
    created_at: z.string(),
    data: verificationItemSchema.extend({ runtime: z.string() }),
  })
  .meta({ id: "VerificationRequestedEvent" });

/** Leases every due request of a runtime with endpoints to `webhook` and queues its event. */
export async function pushDueRequests(db: Db, now: Date): Promise<number> {
  const due = await selectRuntimesWithDueRequests(db.driver, now);
  const pushed = await selectRuntimesWithEndpoints(db.driver, due);
  let queued = 0;
  for (const runtimeId of pushed) {
    const taken = await takeRequests(db, runtimeId, WEBHOOK_WORKER, now, PUSH_BATCH);
    const runtime = await db.prisma.runtime.findUnique({ where: { id: runtimeId }, select: { name: true } });
    if (!runtime) continue;
    queued += await enqueueEvents(
      db.driver,
      taken.map(({ request, item }) => {
        const id = `evt_ver_${item.id.replaceAll("-", "")}_${item.try}`;
        return {
          id,
          type: VERIFICATION_EVENT,
          runtimeId,
          invocationUid: request.invocation_uid,
          payload: {
            id,
            type: VERIFICATION_EVENT,
            created_at: now.toISOString(),
            data: { ...item, runtime: runtime.name },
          },
        };
      }),
      now,
    );
  }
  return queued;
}

/** A webhook's 2xx body: a finding answers the request; anything else (empty, not JSON, no `found`) waits for the API. */
export async function readWebhookAnswer(db: Db, payload: unknown, text: string): Promise<void> {
  const event = verificationRequestedEventSchema.safeParse(payload);
  if (!event.success) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  if (!body || typeof body !== "object" || !("found" in body)) return;
  const finding = findingSchema.safeParse(body);
  if (!finding.success) return;
  const runtimeId = await selectRuntimeOfRequest(db.driver, event.data.data.id);
  if (!runtimeId) return;
  await answerVerification(
    db,
    { runtimeId, by: `runtime:${event.data.data.runtime}`, via: "webhook" },
    event.data.data.id,
    finding.data,
  );
}
