import { deliverDue } from "../webhooks/deliver";
import { fanOutTransitions } from "../webhooks/fan-out";
import { readWebhookAnswer, VERIFICATION_EVENT } from "../verify/push";
import type { Job } from "./job";

// Webhooks: turn new status changes into outbox rows, then send what is due.
// Both steps claim rows with FOR UPDATE SKIP LOCKED, so every instance may run this.
export const webhookJob: Job = {
  name: "webhooks",
  run: async (db, now) => {
    const fanned = await fanOutTransitions(db, now);
    // A verification request's 2xx answer may carry the finding (lib/verify/push.ts).
    const sent = await deliverDue(db, now, {
      answers: { [VERIFICATION_EVENT]: (payload, text) => readWebhookAnswer(db, payload, text) },
    });
    return { fanned, sent };
  },
};
