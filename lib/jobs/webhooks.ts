import { deliverDue } from "../webhooks/deliver";
import { fanOutTransitions } from "../webhooks/fan-out";
import { readWebhookAnswer, VERIFICATION_EVENT } from "../verify/push";
import { collectFromTransitions, scanForNotices } from "../notifications/collect";
import { composeDigests } from "../notifications/digest";
import { channelSenderFor } from "../notifications/send";
import { redrawSlackMessages } from "../slack/channel";
import type { Job } from "./job";

// Webhooks and notifications: turn new status changes into outbox rows and the items notification channels
// collect, scan for what no change shows (stalls, duplicate flags), make each due channel's digest, then
// send what is due. Every step claims rows with FOR UPDATE SKIP LOCKED or a unique key, so every instance
// may run this.
export const webhookJob: Job = {
  name: "webhooks",
  run: async (db, now) => {
    const fanned = await fanOutTransitions(db, now, {
      listener: collectFromTransitions,
    });
    const scanned = await scanForNotices(db, now);
    const digests = await composeDigests(db, now);
    // A verification request's 2xx answer may carry the finding (lib/verify/push.ts).
    const sent = await deliverDue(db, now, {
      answers: { [VERIFICATION_EVENT]: (payload, text) => readWebhookAnswer(db, payload, text) },
      channels: channelSenderFor(db),
    });
    // Slack messages whose call moved since they were drawn (a decision here or there) say so now.
    const slackRedrawn = await redrawSlackMessages(db);
    return { fanned, scanned, digests, sent, slackRedrawn };
  },
};
