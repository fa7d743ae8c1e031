import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { operatorActionSchema, type OperatorAction } from "../outcome/actions";
import { actOnInvocation } from "../invocations/act";
import { idParamSchema, runtimeNameSchema } from "../outcome/record-fields";
import { BULK_MAX_TARGETS } from "./filters";

export { BULK_MAX_TARGETS };

/**
 * Approving, rejecting, recording a verification and settling need someone to
 * look at each invocation's own evidence, so they are not offered in bulk.
 */
export const bulkActions = ["assign", "escalate", "request_verification", "comment"] as const satisfies ReadonlyArray<
  OperatorAction["action"]
>;

export const bulkTargetSchema = z.object({
  invocation_id: idParamSchema,
  runtime: runtimeNameSchema,
  version: z.number().int().min(0),
});
export type BulkTarget = z.infer<typeof bulkTargetSchema>;

export const bulkActionRequestSchema = z
  .intersection(
    operatorActionSchema,
    z.object({
      targets: z
        .array(bulkTargetSchema)
        .min(1)
        .max(BULK_MAX_TARGETS, `at most ${BULK_MAX_TARGETS} targets a request; send the rest in further requests`),
    }),
  )
  .superRefine((body, ctx) => {
    if (!(bulkActions as readonly string[]).includes(body.action)) {
      ctx.addIssue({
        code: "custom",
        path: ["action"],
        message: `${body.action} cannot be done in bulk (only ${bulkActions.join(", ")}): it needs each invocation's own evidence.`,
      });
    }
  });
export type BulkActionRequest = z.infer<typeof bulkActionRequestSchema>;

export type BulkItemResult = {
  invocation_id: string;
  runtime: string;
  ok: boolean;
  /** On success the new status and version; on refusal the current ones, when known. */
  status?: string;
  version?: number;
  code?: string;
  message?: string;
};

export const bulkResultSchema = z
  .object({
    results: z.array(
      z.object({
        invocation_id: z.string(),
        runtime: z.string(),
        ok: z.boolean(),
        status: z.string().optional(),
        version: z.number().int().optional(),
        code: z.string().optional(),
        message: z.string().optional(),
      }),
    ),
    succeeded: z.number().int(),
    refused: z.number().int(),
  })
  .meta({ id: "BulkActionResult" });
export type BulkResult = z.infer<typeof bulkResultSchema>;

export async function performBulkAction(db: Db, request: BulkActionRequest, actor: string): Promise<BulkResult> {
  const { targets, ...action } = request;
  const names = [...new Set(targets.map((t) => t.runtime))];
  const runtimes = new Map(
    (await db.prisma.runtime.findMany({ where: { name: { in: names } }, select: { id: true, name: true } })).map(
      (r) => [r.name, r.id],
    ),
  );

  const results: BulkItemResult[] = [];
  for (const target of targets) {
    const base = { invocation_id: target.invocation_id, runtime: target.runtime };
    const runtimeId = runtimes.get(target.runtime);
    if (!runtimeId) {
      results.push({ ...base, ok: false, code: "NOT_FOUND", message: `No runtime ${target.runtime}.` });
      continue;
    }
    try {
      const outcome = await actOnInvocation(
        db,
        { invocationId: target.invocation_id, runtimeId },
        action as OperatorAction,
        { actor, version: target.version },
      );
      results.push(
        outcome.ok
          ? { ...base, ok: true, status: outcome.invocation.status, version: outcome.invocation.version }
          : {
              ...base,
              ok: false,
              code: outcome.code,
              message: outcome.message,
              ...(outcome.current ? { status: outcome.current.status, version: outcome.current.version } : {}),
            },
      );
    } catch (error) {
      // Whether this one item's transaction committed is not known here; say so rather than guess.
      console.error(`[settle] bulk ${action.action} on ${target.runtime}/${target.invocation_id}`, error);
      results.push({
        ...base,
        ok: false,
        code: "INTERNAL",
        message:
          "Settle failed on this item; it may or may not have been applied. Open it and check before acting again.",
      });
    }
  }
  const succeeded = results.filter((r) => r.ok).length;
  return { results, succeeded, refused: results.length - succeeded };
}
