// A process that holds the embedded database and keeps writing to it, as a
// busy `npm run dev` does, for cli-beside-server.test.ts. It serves the API
// over HTTP too (as the server does, for the CLI's HTTP commands) and notes
// its address as the server notes it at start-up. It prints "ready <url>",
// and on SIGTERM one JSON line: how many batches it wrote and which failed.
import { closeDb, getDb } from "@/lib/db/client";
import { noteServerAddress } from "@/lib/identity/server-address";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { ingestRecords } from "@/lib/ingest/process-batch";
import { startServer } from "./http-server";

const db = await getDb();
await createRuntimeKey(db, "holder");
const [runtime] = await db.driver.query<{ id: string; name: string }>("SELECT id, name FROM runtimes WHERE name = $1", [
  "holder",
]);
const http = await startServer();
await noteServerAddress(db, http.url);
let batches = 0;
const errors: string[] = [];
let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
});
process.stdout.write(`ready ${http.url}\n`);
while (!stopping) {
  const n = batches;
  const records = [1, 2].map((attempt) => ({
    task_id: `hold-${n}`,
    invocation_id: `hold-${n}`,
    attempt,
    tool: "create_order",
    effect_class: "create",
    envelope: { ok: attempt === 2 },
  }));
  try {
    const result = await ingestRecords(db, runtime!, records);
    if (result.results.some((r) => r.status === "rejected")) errors.push(JSON.stringify(result.results));
  } catch (error) {
    errors.push((error as Error).message);
  }
  batches += 1;
  // A server writes between requests: PGlite's promises settle without returning to the event loop.
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await http.close();
await closeDb();
process.stdout.write(`${JSON.stringify({ batches, errors })}\n`);
