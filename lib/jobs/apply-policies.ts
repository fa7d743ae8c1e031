import { applyPolicies } from "../policies/apply-policies";
import type { Job } from "./job";

// SLA escalation and approval expiry (lib/policies/apply-policies.ts), as actor `system`.
export const applyPoliciesJob: Job = { name: "policies", run: applyPolicies };
