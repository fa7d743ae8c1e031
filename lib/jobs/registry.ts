import { applyPoliciesJob } from "./apply-policies";
import type { Job } from "./scheduler";

// Every background job, in the order runJobsOnce runs them.
export const jobs: Job[] = [applyPoliciesJob];
