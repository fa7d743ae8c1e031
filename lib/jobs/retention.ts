import { runRetentionJob } from "../retention/run";
import type { Job } from "./job";

// Partitions made ahead, months out of retention archived and dropped, the kept shelf and the audit trail swept
// (lib/retention). One instance at a time retires; the others find its lock taken.
export const retentionJob: Job = { name: "retention", run: runRetentionJob };
