import { checkNewestLinks } from "../chain/watch";
import type { Job } from "./job";

// The tamper-evident trail's hourly look at each chain's newest links (lib/chain/watch.ts, docs/audit.md).
export const auditChainJob: Job = { name: "audit_chain", run: (db, now) => checkNewestLinks(db.driver, now) };
