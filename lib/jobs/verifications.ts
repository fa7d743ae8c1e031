import { pushDueRequests } from "../verify/push";
import { runVerifications } from "../verify/schedule";
import type { Job } from "./job";

// Verifiers (lib/verify, decision 027): schedule requests for new unknowns of tools with a verifier, open the
// due ones, close what was settled meanwhile, hand back to a person what ran out of tries, and push what is due
// to runtimes with webhook endpoints (the webhook job, next in the registry, sends it in the same tick).
export const verificationsJob: Job = {
  name: "verifications",
  run: async (db, now) => ({ ...(await runVerifications(db, now)), pushed: await pushDueRequests(db, now) }),
};
