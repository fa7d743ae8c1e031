import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getTaskTimeline } from "@/app/api/v1/tasks/[task_id]/timeline/route";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { findTaskPage } from "@/lib/invocations/task-page";
import { TASK_PAGE_SIZE } from "@/lib/invocations/task-order";
import { call, openSettle, type TestContext } from "./harness";
import { ingest } from "./routes";

// The task page stays small on a long task: the server reads a first page of
// invocations (those that need a person first, then the latest) with their
// attempts, and the story comes from the timeline API a page at a time.

const base = Date.now() - 3_600_000;
const at = (s: number) => new Date(base + s * 1000).toISOString();

describe("a long task's page", () => {
  let t: TestContext;
  const count = TASK_PAGE_SIZE + 2;

  beforeAll(async () => {
    t = await openSettle("postgres");
    const records = Array.from({ length: count }, (_, i) => ({
      event_id: `long-${i}`,
      task_id: "long-task",
      invocation_id: `inv-${String(i).padStart(3, "0")}`,
      tool: "send_email",
      effect_class: "send",
      at: at(i * 10),
      // The oldest one's outcome is unknown: it needs a person.
      envelope:
        i === 0
          ? { ok: false, commit_state: "unknown", code: "TIMEOUT", next_action: "verify_operation" }
          : { ok: true, commit_state: "committed" },
    }));
    const res = await call(ingest, { key: t.key, body: { records } });
    expect(res.body.rejected).toBe(0);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("renders a first page: the invocation that needs a person, then the latest, with their attempts", async () => {
    const found = await findTaskPage(t.db, {}, "long-task", undefined, new Date());
    if (found.kind !== "found") throw new Error(found.kind);
    const page = found.value;
    expect(page.total).toBe(count);
    expect(page.need_person).toBe(1);
    expect(page.rows).toHaveLength(TASK_PAGE_SIZE);
    expect(page.rows.slice(0, 3).map((r) => r.invocation_id)).toEqual([
      "inv-000",
      `inv-0${count - 1}`,
      `inv-0${count - 2}`,
    ]);
    expect(page.rows.map((r) => r.invocation_id)).not.toContain("inv-001");
    expect(page.invocations.map((i) => i.invocation_id).sort()).toEqual(page.rows.map((r) => r.invocation_id).sort());
    expect(page.invocations[0]!.attempts[0]!.envelope).toBeNull();
  });

  it("serves the story a page at a time, oldest first, without envelopes, only to whom may see the task", async () => {
    const path = (limit: number) => `/api/v1/tasks/long-task/timeline?limit=${limit}`;
    const res = await call(getTaskTimeline, { key: t.key, params: { task_id: "long-task" }, path: path(3) });
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(count);
    expect(res.body.events).toHaveLength(3);
    expect(res.body.lanes).toHaveLength(count);
    const first = res.body.events[0];
    expect(res.body.lanes[first.lane]).toMatchObject({ invocation_id: "inv-000", tool: "send_email" });
    expect(first.record.envelope).toBeNull();

    const other = await createRuntimeKey(t.db, "other-runtime");
    const hidden = await call(getTaskTimeline, { key: other.key, params: { task_id: "long-task" }, path: path(3) });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });
});
