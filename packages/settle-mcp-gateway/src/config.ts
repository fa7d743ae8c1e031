import { readFileSync } from "node:fs";
import { z } from "zod";

// The gateway's configuration file. The zod schema is the one source: the
// JSON schema shipped beside the package (settle-mcp.schema.json) is
// generated from it, and a test keeps the two equal. Every field has a
// default, so an empty file (or none) is a working configuration.

export const effectClasses = ["read", "create", "send", "money", "destructive"] as const;
export const effectClassSchema = z.enum(effectClasses);
export type EffectClass = z.infer<typeof effectClassSchema>;
/** A tool nothing classifies: Settle treats it as a write (docs/outcome-model.md §2). */
export type EffectOrUnclassified = EffectClass | "unclassified";

const probeSchema = z
  .strictObject({
    tool: z.string().min(1).describe("A read on the same server that looks the effect up, e.g. get_order."),
    arguments: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        "Its arguments. Strings may hold {{idempotency_key}}, {{invocation_id}} and {{args.<name>}} (the call's own arguments).",
      ),
    found: z
      .string()
      .default("found")
      .describe(
        "The boolean field of the probe's structuredContent that says whether the effect exists; without it the probe is inconclusive.",
      ),
  })
  .describe(
    "How to check whether an earlier call whose outcome is unknown took effect (source article 002 (docs/outcome-model.md): a probe before any second attempt).",
  );

const toolRuleSchema = z.strictObject({
  match: z
    .string()
    .min(1)
    .describe("A tool name, or a pattern where * stands for any characters (create_*, *_delete)."),
  effect: effectClassSchema
    .optional()
    .describe("The effect class. Overrides the server's annotations, which the MCP specification calls untrusted."),
  key_args: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Only these arguments (dotted paths) make the idempotency key: leave out timestamps, nonces, fetched prices (source article 002 (docs/outcome-model.md): key the intent, not the payload).",
    ),
  key: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The idempotency key itself, from the arguments: "charge:{{args.order_id}}" makes every charge of one order one intent. Overrides key_args.',
    ),
  key_scope: z
    .enum(["runtime", "task"])
    .optional()
    .describe(
      "runtime (default): the same call is the same intent in any task. task: only within one task, so a new task may repeat it.",
    ),
  replay: z
    .boolean()
    .optional()
    .describe(
      "Answer a call that already committed with the stored result of the first, as Stripe replays an idempotent request.",
    ),
  idempotency_arg: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[^.]+$/, "a top-level argument name")
    .optional()
    .describe(
      "A top-level argument the gateway sets to Settle's stable key for the call before forwarding it, whatever the model put there (models mint a new key on every retry). The argument is left out of the key and the digest, so a re-issue with a new key is the same intent, and one effect at the provider too.",
    ),
  send_arguments: z
    .boolean()
    .optional()
    .describe(
      "Send the call's arguments to Settle (default true): it redacts secrets, shows them on the invocation page and summarises the call. false keeps them in the gateway and sends only their digest.",
    ),
  approval: z.boolean().optional().describe("A person approves every call in Settle before it is forwarded."),
  probe: probeSchema.optional(),
  timeout_s: z.number().positive().max(86_400).optional().describe("This tool's call timeout."),
});
export type ToolRule = z.infer<typeof toolRuleSchema>;

const effectPolicySchema = z.strictObject({
  unreachable: z
    .enum(["fail_closed", "fail_open"])
    .optional()
    .describe(
      "When Settle cannot be reached: refuse the call (fail_closed) or forward it and record it later (fail_open).",
    ),
  approval: z.boolean().optional(),
  replay: z.boolean().optional(),
});
export type EffectPolicy = z.infer<typeof effectPolicySchema>;

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    settle_url: z
      .string()
      .url()
      .optional()
      .describe(
        "Settle's address; SETTLE_URL or --settle-url win. The key is never read from this file: SETTLE_KEY or --key.",
      ),
    console_url: z
      .string()
      .url()
      .optional()
      .describe("Where people open Settle's console, for the links in answers. Default: settle_url."),
    task: z
      .strictObject({
        sources: z
          .array(z.enum(["meta", "header", "session"]))
          .min(1)
          .default(["meta", "header", "session"])
          .describe(
            "Where the task id comes from, first found wins: the request's _meta, an HTTP header, or one task per gateway session.",
          ),
        meta_key: z.string().min(1).default("settle.dev/task_id"),
        header: z.string().min(1).default("settle-task-id"),
      })
      .prefault({}),
    tools: z.array(toolRuleSchema).default([]).describe("Rules by tool name, first match wins."),
    effects: z
      .partialRecord(z.enum([...effectClasses, "unclassified"]), effectPolicySchema)
      .default({})
      .describe(
        "Per effect class: what to do when Settle is unreachable, whether a person approves, whether committed calls are replayed.",
      ),
    default_effect: z
      .enum([...effectClasses, "unclassified"])
      .default("unclassified")
      .describe("The class of a tool no rule and no annotation classifies."),
    settle_catalog: z
      .boolean()
      .default(false)
      .describe(
        "Take effect classes from Settle's tool catalog for this key's runtime (Admin → Tool catalog): after the tools rules here, before the server's annotations.",
      ),
    settle_catalog_refresh_s: z
      .number()
      .min(5)
      .max(86_400)
      .default(60)
      .describe(
        "How often the gateway reads Settle's tool catalog again; an edit in Settle reaches it within this time.",
      ),
    approval_wait_s: z
      .number()
      .min(0)
      .max(3600)
      .default(20)
      .describe(
        "How long a call that needs approval is held for the decision before the answer says it awaits approval.",
      ),
    in_flight_wait_s: z
      .number()
      .min(0)
      .max(600)
      .default(10)
      .describe("How long a call whose twin is in flight is held for the twin's outcome."),
    call_timeout_s: z
      .number()
      .positive()
      .max(86_400)
      .default(120)
      .describe("Past this the outcome is unknown (the call may still land); a late answer is still recorded."),
    settle_timeout_ms: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(2000)
      .describe("How long the guard may take before Settle counts as unreachable."),
    spool_dir: z
      .string()
      .optional()
      .describe(
        "Where records Settle could not take wait. Default: $XDG_STATE_HOME/settle-mcp/spool or ~/.local/state/settle-mcp/spool.",
      ),
    forward_key: z
      .boolean()
      .default(true)
      .describe(
        "Pass the idempotency key and invocation id to the server in the request's _meta (settle.dev/idempotency_key, settle.dev/invocation_id).",
      ),
    record_reads: z
      .boolean()
      .default(true)
      .describe("Record reads in Settle too (never guarded: a read may always be repeated)."),
    dry_run: z
      .boolean()
      .default(false)
      .describe("Record everything, block nothing: denials are logged and the call is forwarded."),
    http: z
      .strictObject({
        allowed_hosts: z
          .array(z.string().min(1))
          .default([])
          .describe(
            "Host headers the HTTP gateway answers to besides localhost, 127.0.0.1 and [::1] at its port: host or host:port (a name clients use to reach it on the network).",
          ),
        allowed_origins: z
          .array(z.string().min(1))
          .default([])
          .describe(
            "Browser origins (scheme://host:port) allowed to call the HTTP gateway. A request with any other Origin is refused; clients that send none (not browsers) are not affected.",
          ),
      })
      .prefault({})
      .describe(
        "The HTTP gateway's access rules (--listen). The bearer token is never read from this file: SETTLE_MCP_TOKEN.",
      ),
    elicitation: z
      .boolean()
      .default(true)
      .describe("When a client supports elicitation, ask its user whether to keep waiting for an approval."),
  })
  .describe("settle-mcp: the Settle MCP gateway's configuration.");

export type GatewayConfig = z.infer<typeof configSchema>;

/** The defaults of source article 002 (docs/outcome-model.md)'s table: money and destructive refuse when Settle cannot vouch for them; reads go ahead. */
const defaultPolicies: Record<EffectOrUnclassified, Required<EffectPolicy>> = {
  read: { unreachable: "fail_open", approval: false, replay: false },
  create: { unreachable: "fail_open", approval: false, replay: false },
  send: { unreachable: "fail_open", approval: false, replay: false },
  money: { unreachable: "fail_closed", approval: false, replay: false },
  destructive: { unreachable: "fail_closed", approval: false, replay: false },
  unclassified: { unreachable: "fail_closed", approval: false, replay: false },
};

export function policyFor(config: GatewayConfig, effect: EffectOrUnclassified): Required<EffectPolicy> {
  const own = config.effects[effect] ?? {};
  const base = defaultPolicies[effect];
  return {
    unreachable: own.unreachable ?? base.unreachable,
    approval: own.approval ?? base.approval,
    replay: own.replay ?? base.replay,
  };
}

export class ConfigError extends Error {}

export function parseConfig(raw: unknown, source: string): GatewayConfig {
  const parsed = configSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ConfigError(`${source}: ${issue?.path.join(".") || "(top level)"}: ${issue?.message ?? "invalid"}`);
}

export function loadConfig(file: string | undefined): GatewayConfig {
  if (file === undefined) return parseConfig({}, "defaults");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: not JSON (${(error as Error).message})`);
  }
  return parseConfig(raw, file);
}

/** The JSON schema editors validate the file with. */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(configSchema, { io: "input", target: "draft-2020-12" });
}
