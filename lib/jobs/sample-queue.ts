import { sampleQueue } from "../metrics/queue-samples";
import type { Job } from "./job";

// The queue's size per runtime once a minute, for the metrics' queue chart (lib/metrics/queue-samples.ts).
export const sampleQueueJob: Job = { name: "sample-queue", run: sampleQueue };
