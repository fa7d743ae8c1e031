// For operations.test.ts: serves two API requests and one round of background
// jobs in a process of its own, so the test reads exactly what Settle logs.
import { getDb, closeDb } from "@/lib/db/client";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { runJobsOnce } from "@/lib/jobs/scheduler";
import { apiRoutes } from "@/server/routes";

const db = await getDb();
const { key } = await createRuntimeKey(db, "log-probe");
process.stderr.write(`key ${key}\n`);
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
const record = {
  task_id: "log-1",
  invocation_id: "log/1",
  tool: "create_user",
  effect_class: "create",
  arguments: { password: "hunter2-secret" },
  envelope: { ok: true, commit_state: "committed" },
};
await apiRoutes["/api/v1/envelopes"].POST(
  new Request("http://settle.test/api/v1/envelopes", { method: "POST", headers, body: JSON.stringify(record) }),
);
await apiRoutes["/api/v1/invocations/{invocation_id}/decision"].GET(
  new Request("http://settle.test/api/v1/invocations/log%2F1/decision", { headers }),
  { params: Promise.resolve({ invocation_id: "log/1" }) },
);
await runJobsOnce(db, new Date());
await closeDb();
