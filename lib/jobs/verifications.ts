import { runVerifications } from "../verify/schedule";
import type { Job } from "./job";

// Verifiers (lib/verify, decision 027): schedule requests for new unknowns of tools with a verifier, open the
// due ones, close what was settled meanwhile, hand back to a person what ran out of tries.
export const verificationsJob: Job = { name: "verifications", run: runVerifications };
