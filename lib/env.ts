import { isIP } from "node:net";
import { z } from "zod";
import { processWide } from "./process-wide";

// The only module that reads process.env. Parsed once, on first use, so a
// test can set variables before anything touches the database.

const schema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgresql:// URL")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    SETTLE_DATA_DIR: z.string().default("./.settle/data"),
    // Where retention writes what it removes (lib/retention/archive.ts): gzipped JSON Lines and their manifest.
    SETTLE_ARCHIVE_DIR: z.string().default("./.settle/archive"),
    SETTLE_STALL_WINDOW_S: z.coerce.number().int().positive().default(300),
    SETTLE_DB_POOL_SIZE: z.coerce.number().int().positive().default(10),
    SETTLE_PUBLIC_URL: z.string().url().optional(),
    /** Signs session cookies. Required for PostgreSQL in production; the embedded database keeps its own. */
    SETTLE_AUTH_SECRET: z
      .string()
      .min(32, "must be at least 32 characters (e.g. $(openssl rand -base64 32))")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    /** Sign-in attempts allowed per IP per minute (the limit lives in the database, shared by all instances). */
    SETTLE_SIGN_IN_RATE_LIMIT: z.coerce.number().int().positive().default(10),
    /** Failed sign-ins one account may have in 15 minutes before it is locked for 15 minutes, whatever the address. */
    SETTLE_SIGN_IN_ACCOUNT_LIMIT: z.coerce.number().int().positive().default(10),
    /**
     * Reverse proxies whose X-Forwarded-For is believed (comma-separated IPs or CIDRs). Empty: the client
     * address is the socket's, and every forwarded header is ignored.
     */
    SETTLE_TRUSTED_PROXIES: z
      .string()
      .default("")
      .transform((s, ctx) => {
        const list = s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean);
        for (const entry of list) {
          if (!isCidr(entry))
            ctx.addIssue({
              code: "custom",
              message: `"${entry}" is not an IP address or CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)`,
            });
        }
        return list;
      }),
    /** Webhook URLs may point at loopback, private and link-local addresses (tests and local development only). */
    SETTLE_WEBHOOK_ALLOW_PRIVATE: z
      .enum(["0", "1"])
      .default("0")
      .transform((v) => v === "1"),
    /** Where notification emails go out: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465. Unset: no email channels. */
    SETTLE_SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, "SETTLE_SMTP_URL must be an smtp:// or smtps:// URL")
      .optional(),
    /** The From address of notification emails. */
    SETTLE_SMTP_FROM: z.string().default("Settle <settle@localhost>"),
    /** How long a new personal access token lives unless its creator picks otherwise. */
    SETTLE_TOKEN_DEFAULT_DAYS: z.coerce.number().int().min(1).max(366).default(90),
    /** Background jobs (webhook deliveries, policy, queue samples) run in every app instance unless "off". */
    SETTLE_BACKGROUND_JOBS: z.enum(["on", "off"]).default("on"),
    /** How often each background job runs. */
    SETTLE_JOBS_INTERVAL_S: z.coerce.number().positive().default(5),
    /** How long one webhook POST may take before it counts as a failed attempt. */
    SETTLE_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    /** Tries per webhook delivery (with exponential back-off between them) before it is marked failed. */
    SETTLE_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().default(12),
    /** OTLP ingest: a span (or resource) attribute that names the task, such as session.id; unset, the trace is the task. */
    SETTLE_OTLP_TASK_ATTRIBUTE: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .optional()
      .or(z.literal("").transform(() => undefined)),
    /**
     * `npm start` (bin/settle-server.mjs): how long a client may take to send a whole request, headers and
     * body, and its headers alone; past either its connection is closed. Answers are not limited: a
     * long-polled decision (`wait` up to 60 s) is held after its request has arrived.
     */
    SETTLE_REQUEST_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(30),
    SETTLE_HEADERS_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(10),
    /** `npm start`: connections held open at once; one more is closed as it arrives. */
    SETTLE_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
    /** The JSON log's level (pino): one line per request and per job run at `info`; idle job runs at `debug`. */
    SETTLE_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    /** The bearer token `GET /metrics` (Prometheus) asks for; unset, /metrics is off. */
    SETTLE_METRICS_TOKEN: z
      .string()
      .min(16, "SETTLE_METRICS_TOKEN must be at least 16 characters")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    PORT: z.coerce.number().int().positive().default(3000),
    NEXT_RUNTIME: z.string().optional(),
    NEXT_PHASE: z.string().optional(),
  })
  .superRefine((e, ctx) => {
    // node refuses to start a server whose headers may take longer than the whole request.
    if (e.SETTLE_HEADERS_TIMEOUT_S > e.SETTLE_REQUEST_TIMEOUT_S) {
      ctx.addIssue({
        code: "custom",
        path: ["SETTLE_HEADERS_TIMEOUT_S"],
        message: `must be at most SETTLE_REQUEST_TIMEOUT_S (${e.SETTLE_REQUEST_TIMEOUT_S})`,
      });
    }
  });

function isCidr(entry: string): boolean {
  const [address, bits, ...rest] = entry.split("/");
  const family = isIP(address ?? "");
  if (!family || rest.length > 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n <= (family === 4 ? 32 : 128);
}

export type Env = z.infer<typeof schema>;

// One reading per process, whichever bundle asks first; resetEnv() makes every bundle read again.
const reading = processWide("env", () => ({ cached: undefined as Env | undefined }));

export function env(): Env {
  let { cached } = reading;
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
      throw new Error(`Settle's settings are invalid:\n${problems}`);
    }
    cached = reading.cached = parsed.data;
  }
  return cached;
}

export function publicUrl(): string {
  const e = env();
  return e.SETTLE_PUBLIC_URL ?? `http://localhost:${e.PORT}`;
}

/** For tests and the CLI, which change settings after start-up. */
export function resetEnv(): void {
  reading.cached = undefined;
}

export function setEnv(values: Record<string, string | undefined>): void {
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  resetEnv();
}
