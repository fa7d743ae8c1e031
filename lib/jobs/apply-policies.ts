import { applyPolicies } from "../invocations/apply-policies";
import type { Job } from "./job";

// SLA escalation and approval expiry (lib/invocations/apply-policies.ts), as actor `system`.
export const applyPoliciesJob: Job = { name: "policies", run: applyPolicies };
