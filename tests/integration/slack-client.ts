import { POST as interactions } from "@/app/api/v1/integrations/slack/interactions/route";
import { ACTION_IDS } from "@/lib/slack/blocks";
import { slackClicksTaken } from "@/lib/slack/interactions";
import { slackSignature } from "@/lib/slack/signature";
import { call } from "./harness";
import type { SlackReceiver } from "./slack-receiver";

// Slack's side of an interaction, from its documentation: a signed block_actions click on a button Settle
// drew, the modal it opened (read back from the stand-in's views.open), and the modal's signed view_submission,
// each form-encoded as payload=….

const PATH = "/api/v1/integrations/slack/interactions";

export type Drawn = { invocation_id: string; runtime: string; version: number; args_digest: string | null };
export type OpenedModal = { callback_id: string; private_metadata: string; blocks: Array<Record<string, any>> };

export function slackClient(slack: SlackReceiver, secret: string) {
  let n = 0;
  function signed(payload: unknown, options: { at?: number; secret?: string } = {}) {
    const raw = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const ts = String(options.at ?? Math.floor(Date.now() / 1000));
    const headers = {
      "x-slack-request-timestamp": ts,
      "x-slack-signature": slackSignature(options.secret ?? secret, ts, raw),
    };
    return { raw, headers };
  }
  const post = (req: { raw: string; headers: Record<string, string> }) =>
    call(interactions, {
      path: PATH,
      raw: req.raw,
      contentType: "application/x-www-form-urlencoded",
      headers: req.headers,
    });

  /** A click on a button drawn for `drawn` (its id, version and digest shown, as blocks.ts binds them). */
  function clickPayload(user: string, action: keyof typeof ACTION_IDS, drawn: Drawn) {
    n += 1;
    return {
      type: "block_actions",
      user: { id: user },
      trigger_id: `trig-${n}`,
      response_url: slack.url(`/response/${n}`),
      actions: [
        {
          action_id: ACTION_IDS[action],
          value: JSON.stringify({ i: drawn.invocation_id, r: drawn.runtime, v: drawn.version, d: drawn.args_digest }),
        },
      ],
    };
  }
  const responseTo = (payload: { response_url: string }) =>
    slack.calls.filter((c) => slack.url(c.path) === payload.response_url).map((c) => c.body);

  /** Clicks, waits for what the click does after its answer; the modal it opened, if any. */
  async function click(user: string, action: keyof typeof ACTION_IDS, drawn: Drawn) {
    const payload = clickPayload(user, action, drawn);
    const opens = slack.to("/api/views.open").length;
    const res = await post(signed(payload));
    await slackClicksTaken();
    const opened = slack.to("/api/views.open").slice(opens);
    const modal = opened.length > 0 ? (opened.at(-1)!.body.view as OpenedModal) : null;
    return { res, payload, modal, trigger: opened.at(-1)?.body.trigger_id, answers: () => responseTo(payload) };
  }

  /** The button a message Settle drew holds for `action`, as what it is bound to. */
  function drawnButton(message: unknown, action: keyof typeof ACTION_IDS): Drawn | null {
    const blocks = (message as { blocks?: Array<{ elements?: Array<Record<string, string>> }> }).blocks ?? [];
    const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === ACTION_IDS[action]);
    if (!button) return null;
    const b = JSON.parse(button.value!) as { i: string; r: string; v: number; d: string | null };
    return { invocation_id: b.i, runtime: b.r, version: b.v, args_digest: b.d };
  }

  /** The modal's submission, its fields as Slack sends them (state.values[block_id][action_id].value). */
  function submission(user: string, modal: OpenedModal, fields: Record<string, string | null>) {
    const values = Object.fromEntries(Object.entries(fields).map(([k, value]) => [k, { [k]: { value } }]));
    return {
      type: "view_submission",
      user: { id: user },
      view: { callback_id: modal.callback_id, private_metadata: modal.private_metadata, state: { values } },
    };
  }
  async function submit(user: string, modal: OpenedModal, fields: Record<string, string | null>) {
    const res = await post(signed(submission(user, modal, fields)));
    await slackClicksTaken();
    return res;
  }
  return { signed, post, clickPayload, responseTo, click, drawnButton, submission, submit };
}
