import "server-only";
import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { json } from "../http/route";
import { log } from "../observability/log";
import { processWide } from "../process-wide";
import { refuseEditedArguments } from "../invocations/approval-edit";
import { ACTION_IDS, readBound } from "./blocks";
import { mayOpenModal, takeSlackClick, type Click } from "./act";
import { editableText } from "./editable";
import { editModal, readArgumentsText, readModalMetadata, recordModal, replyModal, type ModalMetadata } from "./modals";
import type { SlackApp } from "./settings";
import { readSignedSlackRequest } from "./signed-request";
import { callSlackApi, postToResponseUrl } from "./web-api";

// Slack's interactivity requests (POST /api/v1/integrations/slack/interactions). Nothing is believed before
// the signature holds: a missing, wrong or stale signature, or a body already taken once, is a 401 and
// changes nothing. Slack wants its answer within 3 s: a click is answered at once and taken right after
// (lib/slack/act.ts), which then rewrites the message through the click's response_url. A button with a form
// (Approve with edits, Reject, Escalate, Found, Not found) opens its modal right after the answer, within the
// trigger_id's 3 s; the modal's submission is then taken as the click, its fields checked first (a field's
// error is answered to Slack at once, and nothing is taken).

const MAX_BODY = 256 * 1024;

/** Clicks being taken after their answer, so a process (and a test) can wait for them. */
const pending = processWide("slackClicks", () => new Set<Promise<unknown>>());

/** Resolves once every click answered so far has been taken. */
export async function slackClicksTaken(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

function later(work: () => Promise<unknown>, click: Click): void {
  const done = work()
    .catch((error: unknown) => log.error({ err: error, slack_user_id: click.slackUserId }, "a Slack click failed"))
    .finally(() => pending.delete(done));
  pending.add(done);
}

const takeLater = (db: Db, app: SlackApp, click: Click) => later(() => takeSlackClick(db, app, click), click);

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

/** What each button asks: taken at once (Approve), or through its modal first. */
const CLICKS: Record<string, { action: Click["action"]; modal: "none" | "edit" | "reply" | "record" }> = {
  [ACTION_IDS.approve]: { action: "approve", modal: "none" },
  [ACTION_IDS.approve_edit]: { action: "approve", modal: "edit" },
  [ACTION_IDS.reject]: { action: "reject", modal: "reply" },
  [ACTION_IDS.escalate]: { action: "escalate", modal: "reply" },
  [ACTION_IDS.found]: { action: "found", modal: "record" },
  [ACTION_IDS.not_found]: { action: "not_found", modal: "record" },
};

const ok = () => new Response(null, { status: 200 });
const fieldError = (field: string, message: string) =>
  json({ response_action: "errors", errors: { [field]: message.slice(0, 1000) } });

/** The modal a button opens, once the click passes the checks its submission will get (lib/slack/act.ts). */
async function openModal(db: Db, app: SlackApp, click: Click, modal: "edit" | "reply" | "record", trigger: string) {
  const view = await mayOpenModal(db, app, click);
  if (!view) return;
  const metadata: ModalMetadata = { b: click.bound, a: click.action, u: click.responseUrl };
  const m = JSON.stringify(metadata);
  let form: Record<string, unknown>;
  if (modal === "edit") {
    const text = editableText(view);
    if (text === null) {
      if (click.responseUrl)
        await postToResponseUrl(click.responseUrl, {
          response_type: "ephemeral",
          replace_original: false,
          text: "These arguments are too long to edit in Slack; nothing was changed. Approve with edits in Settle.",
        });
      return;
    }
    form = editModal(view, text, m);
  } else if (modal === "reply") form = replyModal(view, click.action === "reject" ? "reject" : "escalate", m);
  else form = recordModal(view, click.action === "found" ? "found" : "absent", m);
  const opened = await callSlackApi(app, "views.open", { trigger_id: trigger, view: form });
  if (!opened.ok) log.warn({ error: opened.error }, "Slack views.open failed");
}

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
    const click: Click = { action: kind.action, slackUserId, responseUrl, bound };
    const { modal } = kind;
    if (modal === "none") takeLater(db, app, click);
    else if (typeof payload.trigger_id === "string") {
      const trigger = payload.trigger_id;
      later(() => openModal(db, app, click, modal, trigger), click);
    }
    return ok();
  }

  if (payload.type === "view_submission") {
    const metadata = readModalMetadata(payload.view?.callback_id, payload.view?.private_metadata);
    if (!metadata) return ok();
    const values = payload.view?.state?.values ?? {};
    const field = (id: string) => {
      const value = values[id]?.[id]?.value;
      return typeof value === "string" ? value : null;
    };
    const click: Click = { action: metadata.a, slackUserId, responseUrl: metadata.u, bound: metadata.b };
    if (metadata.a === "found" || metadata.a === "not_found") {
      const note = field("note")?.trim() ?? "";
      if (!note) return fieldError("note", "An evidence note is required: what did you check?");
      click.note = note.slice(0, 4000);
    } else if (metadata.a === "approve") {
      const edited = readArgumentsText(field("arguments"));
      if (!edited.ok) return fieldError("arguments", edited.error);
      const refused = refuseEditedArguments(edited.value);
      if (refused) return fieldError("arguments", `Settle refused this edit: ${refused}`);
      click.arguments = edited.value;
      const note = field("note")?.trim();
      if (note) click.note = note.slice(0, 3000);
    } else {
      const reply = field("reply")?.trim();
      if (reply) click.reply = reply.slice(0, 4000);
    }
    takeLater(db, app, click);
    return ok();
  }
  return ok();
}
