import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive, readManifest, verifyArchive } from "@/lib/retention/archive";
import { archiveBatch } from "@/lib/retention/batches";
import { openSettle, type TestContext } from "./harness";

// A batch sweep reads by key (keyset), a page at a time, a file per batch: whatever the page and batch sizes and
// however the rows that may go are spread among those that stay, exactly the rows that match leave, each in one
// whole file, and every other row stays.

const RUNTIMES = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"];

const rowsArb = fc.uniqueArray(
  fc.record({
    runtime: fc.constantFrom(...RUNTIMES),
    // Event keys as callers send them: any text, so the key order is the database's text order.
    key: fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }),
    goes: fc.boolean(),
  }),
  { maxLength: 30, selector: (r) => `${r.runtime}/${r.key}` },
);

describe("a batch sweep of the kept shelf", () => {
  let t: TestContext;
  let root: string;
  beforeAll(async () => {
    t = await openSettle("postgres");
    root = mkdtempSync(path.join(tmpdir(), "settle-batches-"));
  });
  afterAll(async () => {
    await t?.teardown();
    rmSync(root, { recursive: true, force: true });
  });

  it("takes exactly the rows that match, a whole file per batch, for any page and batch size", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        async (rows, page, batchRows) => {
          run += 1;
          const dir = path.join(root, String(run));
          await t.db.driver.query(`DELETE FROM attempts_kept`);
          await t.db.driver.query(
            `INSERT INTO attempts (runtime_id, event_key, invocation_uid, seq, phase, at, tool, dialect, outcome, commit_state,
                                 retry_directive, next_action, shelf)
           SELECT r.runtime, r.key, gen_random_uuid(), CASE WHEN r.goes THEN 1 ELSE 0 END, 'outcome', now(), 'create_invoice',
                  'settle', 'ok', 'committed', 'none', 'none', 'infinity'
             FROM jsonb_to_recordset($1::jsonb) AS r(runtime uuid, key text, goes boolean)`,
            [JSON.stringify(rows)],
          );
          const went = await archiveBatch(
            t.db,
            dir,
            new Date(),
            { table: "attempts", from: "attempts_kept", where: "t.seq = $1::int", params: [1] },
            { page, batchRows },
          );
          const goes = rows.filter((r) => r.goes);
          expect(went).toBe(goes.length);
          const left = await t.db.driver.query<{ runtime_id: string; event_key: string }>(
            `SELECT runtime_id::text, event_key FROM attempts_kept`,
          );
          const ids = (list: Array<{ runtime: string; key: string }>) =>
            list.map((r) => `${r.runtime}/${r.key}`).sort();
          expect(ids(left.map((r) => ({ runtime: r.runtime_id, key: r.event_key })))).toEqual(
            ids(rows.filter((r) => !r.goes)),
          );

          const archived: Array<{ runtime: string; key: string }> = [];
          const files = goes.length === 0 ? [] : (await readManifest(dir)).files;
          expect(files).toHaveLength(Math.ceil(goes.length / batchRows));
          for (const entry of files) {
            expect(await verifyArchive(dir, entry)).toBe("ok");
            expect(entry.rows).toBeLessThanOrEqual(batchRows);
            for await (const lines of (await readArchive(path.join(dir, entry.file))).pages) {
              archived.push(...lines.map((l) => ({ runtime: String(l.runtime_id), key: String(l.event_key) })));
            }
          }
          expect(ids(archived)).toEqual(ids(goes));
          const [open] = await t.db.driver.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM retention_archives WHERE phase <> 'deleted'`,
          );
          expect(open!.n).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
