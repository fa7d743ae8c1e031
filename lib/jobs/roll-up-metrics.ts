import { refreshMetricRollups } from "../metrics/rollup";
import type { Job } from "./job";

// Trust-metric rollups (lib/metrics/rollup.ts): recompute what changed
// under rolled-up hours, then roll up the hours that have passed. One instance
// at a time holds the advisory lock; the others skip the tick.
export const rollUpMetricsJob: Job = { name: "metrics-rollup", run: (db) => refreshMetricRollups(db) };
