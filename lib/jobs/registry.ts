import { applyPoliciesJob } from "./apply-policies";
import { auditChainJob } from "./audit-chain";
import { retentionJob } from "./retention";
import { rollUpMetricsJob } from "./roll-up-metrics";
import { sampleQueueJob } from "./sample-queue";
import type { Job } from "./job";
import { verificationsJob } from "./verifications";
import { webhookJob } from "./webhooks";

// Every background job, in the order runJobsOnce runs them.
// Verifications first: what a verifier settled in this tick is settled before the SLA looks at it.
// Webhooks after the policies, so a policy's escalation is announced in the same tick;
// metric rollups after the changes the others made; retention after the rollups counted what it may take;
// the audit chain's hourly check last.
export const jobs: Job[] = [
  verificationsJob,
  applyPoliciesJob,
  sampleQueueJob,
  webhookJob,
  rollUpMetricsJob,
  retentionJob,
  auditChainJob,
];
