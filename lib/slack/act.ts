import "server-only";
import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { publicUrl } from "../env";
import { can } from "../identity/roles";
import { performAction } from "../invocations/act";
import { getInvocation, type InvocationView } from "../invocations/read";
import type { OperatorAction } from "../outcome/actions";
import { shownDigest, slackMessageFor, type Bound } from "./blocks";
import { getLinkedPerson } from "./links";
import { slackMayTake, type SlackAction } from "./policy";
import type { SlackApp } from "./settings";
import { postToResponseUrl } from "./web-api";

// A click, after Slack has had its answer: who it acts as (a linked operator, manager or admin), whether the
// policy lets this class be decided from Slack, whether the call is still what the button was drawn for, then
// the console's own action (lib/invocations/act.ts: state machine, version check, quorum), audited "via
// Slack" with the Slack user id. Every refusal changes nothing and is told only to the person who clicked.
// A button that opens a modal gets the same checks before it opens (mayOpenModal) and again when the modal is
// submitted: the submission is the click, carrying the edited arguments, a note or a message to the agent.

export type Click = {
  action: "approve" | "reject" | "escalate" | "found" | "not_found";
  slackUserId: string;
  responseUrl: string | null;
  bound: Bound;
  /** Found / Not found: the evidence; an approval with edits: the approver's note. */
  note?: string;
  /** Approve with edits: the arguments the call is to run with. */
  arguments?: Record<string, unknown>;
  /** Reject / escalate: the message to the agent. */
  reply?: string;
};

const policyAction: Record<Click["action"], SlackAction> = {
  approve: "approve",
  reject: "reject",
  escalate: "escalate",
  found: "record",
  not_found: "record",
};

const ATTEMPTS = 5;

/** What a click asks of the state machine. */
function operatorAction(click: Click, email: string, slackUserId: string): OperatorAction {
  const via = `via Slack (${slackUserId})`;
  switch (click.action) {
    case "approve":
      return click.arguments
        ? { action: "approve", note: click.note ? `${click.note} — ${via}` : via, arguments: click.arguments }
        : { action: "approve", note: via };
    case "reject":
      return { action: "reject", note: via, reply: click.reply ?? null };
    case "escalate":
      return { action: "escalate", note: `Escalated from Slack by ${email}`, reply: click.reply ?? null };
    case "found":
    case "not_found":
      return {
        action: "record_verification",
        result: click.action === "found" ? "found" : "absent",
        evidence: click.note ?? "",
        note: via,
      };
  }
}

/**
 * Whether the call is still what the button showed: the same arguments digest, and the same version — or
 * only other people's approvals since (counted, so the quorum can be met from one message).
 */
async function stillBound(db: Db, view: InvocationView, bound: Bound): Promise<boolean> {
  if (shownDigest(view) !== bound.d) return false;
  if (view.version === bound.v) return true;
  if (view.version < bound.v || view.status !== "awaiting_approval") return false;
  const [row] = await db.driver.query<{ n: number; other: number }>(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE a.action <> 'approve')::int AS other
       FROM invocation_actions a
       JOIN invocations i ON i.id = a.invocation_uid AND i.runtime_id = a.runtime_id
       JOIN runtimes r ON r.id = i.runtime_id
      WHERE r.name = $1 AND i.invocation_id = $2 AND a.seq > $3`,
    [bound.r, bound.i, bound.v],
  );
  return row !== undefined && row.other === 0 && row.n === view.version - bound.v;
}

export type ClickOutcome = {
  /** What happened, for the log and tests. */
  result: "acted" | "unlinked" | "role" | "policy" | "changed" | "refused" | "missing";
  invocation: InvocationView | null;
};

type Answers = {
  tell: (text: string) => Promise<unknown>;
  redraw: (view: InvocationView, note?: string) => Promise<unknown>;
};

function answersTo(app: SlackApp, click: Click): Answers {
  const reply = (body: Record<string, unknown>) =>
    click.responseUrl ? postToResponseUrl(click.responseUrl, body) : Promise.resolve(null);
  return {
    tell: (text) => reply({ response_type: "ephemeral", replace_original: false, text }),
    redraw: (view, note) => reply({ replace_original: true, ...slackMessageFor(view, app.actions, publicUrl(), note) }),
  };
}

type Checked = { ok: true; person: { email: string }; view: InvocationView } | ({ ok: false } & ClickOutcome);

/** Who acts, the call now, the policy, and whether the call is what the button showed; a refusal is told. */
async function check(db: Db, app: SlackApp, click: Click, { tell, redraw }: Answers): Promise<Checked> {
  const person = await getLinkedPerson(db, click.slackUserId);
  if (!person) {
    await tell(
      "Your Slack account is not linked to anyone in Settle, so nothing was changed. Link it in Settle under Account → Slack, or ask an admin.",
    );
    return { ok: false, result: "unlinked", invocation: null };
  }
  if (!can(person.role, "act")) {
    await tell(`Your role in Settle (${person.role ?? "deactivated"}) cannot act on calls, so nothing was changed.`);
    return { ok: false, result: "role", invocation: null };
  }
  const view = await getInvocation(db, {}, click.bound.i, { runtime: click.bound.r });
  if (!view) {
    await tell(`Settle has no call ${click.bound.i} of ${click.bound.r} any more; nothing was changed.`);
    return { ok: false, result: "missing", invocation: null };
  }
  if (!slackMayTake(app.actions, view.effect_class, policyAction[click.action])) {
    await tell(
      `Settle's policy keeps this for the console: ${policyAction[click.action]} on ${view.effect_class ?? "unclassified"} calls is not taken from Slack. Nothing was changed; decide in Settle: ${publicUrl()}`,
    );
    return { ok: false, result: "policy", invocation: view };
  }
  if (!(await stillBound(db, view, click.bound))) {
    await redraw(view, "A click on an earlier state of this call was not taken: this is the call now.");
    await tell(
      "This call changed since the message was drawn (decided, new arguments or a newer report): nothing was changed.",
    );
    return { ok: false, result: "changed", invocation: view };
  }
  return { ok: true, person, view };
}

/**
 * Before a button's modal opens: the checks its submission will get, so nobody fills in a form that cannot be
 * taken. The call as it is now when the modal may open; else null, the refusal told (and a stale message redrawn).
 */
export async function mayOpenModal(db: Db, app: SlackApp, click: Click): Promise<InvocationView | null> {
  const checked = await check(db, app, click, answersTo(app, click));
  return checked.ok ? checked.view : null;
}

export async function takeSlackClick(db: Db, app: SlackApp, click: Click): Promise<ClickOutcome> {
  const answers = answersTo(app, click);
  const { tell, redraw } = answers;
  const audit = { via: "slack", slack_user_id: click.slackUserId };
  for (let attempt = 1; ; attempt += 1) {
    const checked = await check(db, app, click, answers);
    if (!checked.ok) return { result: checked.result, invocation: checked.invocation };
    const { person, view } = checked;
    try {
      const after = await performAction(
        db,
        view.invocation_id,
        { ...operatorAction(click, person.email, click.slackUserId), version: view.version, runtime: view.runtime },
        person.email,
        { audit },
      );
      await redraw(after);
      return { result: "acted", invocation: after };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Someone acted in between: read it again, and act on it if it is still what was shown.
      if (error.code === "VERSION_CONFLICT" && attempt < ATTEMPTS) continue;
      const now = await getInvocation(db, {}, click.bound.i, { runtime: click.bound.r });
      if (now) await redraw(now);
      await tell(`${error.message} Nothing was changed.`);
      return { result: "refused", invocation: now };
    }
  }
}
