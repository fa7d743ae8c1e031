import "server-only";
import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { json } from "../http/route";
import { log } from "../observability/log";
import { processWide } from "../process-wide";
import { getInvocation } from "../invocations/read";
import { ACTION_IDS, readBound, recordModal, RECORD_CALLBACK, type Bound } from "./blocks";
import { takeSlackClick, type Click } from "./act";
import type { SlackApp } from "./settings";
import { readSignedSlackRequest } from "./signed-request";
import { callSlackApi } from "./web-api";

// Slack's interactivity requests (POST /api/v1/integrations/slack/interactions). Nothing is believed before
// the signature holds: a missing, wrong or stale signature, or a body already taken once, is a 401 and
// changes nothing. Slack wants its answer within 3 s: a click is answered at once and taken right after
// (lib/slack/act.ts), which then rewrites the message through the click's response_url.

const MAX_BODY = 256 * 1024;

/** Clicks being taken after their answer, so a process (and a test) can wait for them. */
const pending = processWide("slackClicks", () => new Set<Promise<unknown>>());

/** Resolves once every click answered so far has been taken. */
export async function slackClicksTaken(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

function takeLater(db: Db, app: SlackApp, click: Click): void {
  const work = takeSlackClick(db, app, click)
    .catch((error: unknown) => log.error({ err: error, slack_user_id: click.slackUserId }, "a Slack click failed"))
    .finally(() => pending.delete(work));
  pending.add(work);
}

type Payload = {
  type?: string;
  user?: { id?: string };
  response_url?: string;
  trigger_id?: string;
  actions?: Array<{ action_id?: string; value?: string }>;
  view?: {
    callback_id?: string;
    private_metadata?: string;
    state?: { values?: Record<string, Record<string, { value?: string | null }>> };
  };
};

const CLICKS: Record<string, Click["action"]> = {
  [ACTION_IDS.approve]: "approve",
  [ACTION_IDS.reject]: "reject",
  [ACTION_IDS.escalate]: "escalate",
  [ACTION_IDS.found]: "found",
  [ACTION_IDS.not_found]: "not_found",
};

type RecordMetadata = { b: Bound; a: "found" | "not_found"; u: string | null };

const ok = () => new Response(null, { status: 200 });

export async function answerSlackInteraction(db: Db, req: Request, now = new Date()): Promise<Response> {
  const { app, raw } = await readSignedSlackRequest(
    db,
    req,
    { maxBytes: MAX_BODY, advice: "Slack's interaction payloads are smaller." },
    now,
  );

  let payload: Payload;
  try {
    payload = JSON.parse(new URLSearchParams(raw.toString("utf8")).get("payload") ?? "") as Payload;
    if (!payload || typeof payload !== "object") throw new Error("not an object");
  } catch {
    throw new ApiError("INVALID_REQUEST", "Expected a form body with payload=<JSON>, as Slack sends.");
  }
  const slackUserId = payload.user?.id;
  if (typeof slackUserId !== "string") return ok();

  if (payload.type === "block_actions") {
    const action = payload.actions?.[0];
    const kind = action?.action_id ? CLICKS[action.action_id] : undefined;
    const bound = readBound(action?.value);
    // Another element (the "Open in Settle" link) or a value Settle did not draw: nothing to take.
    if (!kind || !bound) return ok();
    const responseUrl = typeof payload.response_url === "string" ? payload.response_url : null;
    if (kind === "found" || kind === "not_found") {
      // The modal must open within Slack's 3 s of the click (its trigger_id expires): open it now, and take the
      // click (with its note) when the modal is submitted. Who may act is checked then, as for every click.
      const view = await getInvocation(db, {}, bound.i, { runtime: bound.r });
      if (view && payload.trigger_id) {
        const metadata: RecordMetadata = { b: bound, a: kind, u: responseUrl };
        const opened = await callSlackApi(app, "views.open", {
          trigger_id: payload.trigger_id,
          view: recordModal(view, kind === "found" ? "found" : "absent", JSON.stringify(metadata)),
        });
        if (!opened.ok) log.warn({ error: opened.error }, "Slack views.open failed");
      }
      return ok();
    }
    takeLater(db, app, { action: kind, slackUserId, responseUrl, bound });
    return ok();
  }

  if (payload.type === "view_submission" && payload.view?.callback_id === RECORD_CALLBACK) {
    let metadata: RecordMetadata;
    try {
      metadata = JSON.parse(payload.view.private_metadata ?? "") as RecordMetadata;
    } catch {
      return ok();
    }
    const bound = readBound(JSON.stringify(metadata?.b));
    if (!bound || (metadata.a !== "found" && metadata.a !== "not_found")) return ok();
    const note = payload.view.state?.values?.note?.note?.value?.trim() ?? "";
    if (!note)
      return json({ response_action: "errors", errors: { note: "An evidence note is required: what did you check?" } });
    takeLater(db, app, {
      action: metadata.a,
      slackUserId,
      responseUrl: typeof metadata.u === "string" ? metadata.u : null,
      bound,
      note: note.slice(0, 4000),
    });
    return ok();
  }
  return ok();
}
