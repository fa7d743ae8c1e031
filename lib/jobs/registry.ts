import { applyPoliciesJob } from "./apply-policies";
import { sampleQueueJob } from "./sample-queue";
import type { Job } from "./scheduler";
import { webhookJob } from "./webhooks";

// Every background job, in the order runJobsOnce runs them.
// Webhooks last, so a policy's escalation is announced in the same tick.
export const jobs: Job[] = [applyPoliciesJob, sampleQueueJob, webhookJob];
