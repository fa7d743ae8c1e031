import {
  createSettleClient,
  SettleError,
  type Decision,
  type GuardAnswer,
  type GuardInput,
  type InvocationDetail,
  type SettleClient,
  type SettleRecord,
} from "@settle/client";
import type { Spool } from "./spool.js";

// The gateway's one way to Settle, through @settle/client. Two clients with
// different patience: the guard and decision reads sit in front of a tool
// call, so they give up after `fastTimeoutMs` with one resend (the caller
// then applies the effect class's fail-closed or fail-open rule); reports
// happen after the answer has gone to the client and may take their time,
// and whatever Settle does not take goes to the spool, never nowhere.

export type Unreachable = { unreachable: true; detail: string };
export const isUnreachable = (v: unknown): v is Unreachable =>
  typeof v === "object" && v !== null && (v as Unreachable).unreachable === true;

/**
 * Settle answered, and said no: the key is refused (401/403: revoked, wrong
 * runtime), the call is (400, 413, 422: what was sent), or the gateway's
 * setup is (any other 4xx, e.g. a 404 from an address that is not Settle's
 * API). Settle is there, so the effect class's fail-open rule does not apply:
 * the call is refused.
 */
export type Refused = {
  refused: true;
  status: number;
  code: string;
  detail: string;
  key: boolean;
  blame: "key" | "call" | "setup";
};
export const isRefused = (v: unknown): v is Refused =>
  typeof v === "object" && v !== null && (v as Refused).refused === true;

export type SettleLink = {
  guard: (input: GuardInput) => Promise<GuardAnswer | Unreachable | Refused>;
  getDecision: (invocationId: string) => Promise<Decision | Unreachable>;
  /** The decision on an invocation that may not exist yet: null when Settle has none (or cannot say), never logged. */
  findDecision: (invocationId: string) => Promise<Decision | null>;
  /** Long-polls until `until` holds or `timeoutMs` pass; the last decision read. */
  awaitDecision: (
    invocationId: string,
    timeoutMs: number,
    until: (d: Decision) => boolean,
  ) => Promise<Decision | Unreachable>;
  getInvocation: (invocationId: string) => Promise<InvocationDetail | Unreachable>;
  /** Sends the records in the background; those Settle cannot take are spooled. */
  report: (records: SettleRecord[]) => void;
  /** Sends the records now and waits: true once Settle took them, false when they were spooled instead. */
  reportNow: (records: SettleRecord[]) => Promise<boolean>;
  /** Records that go straight to the spool (Settle was just found unreachable). */
  spool: (records: SettleRecord[]) => void;
  /** Waits for every report sent so far, then tries the spool once. */
  flush: () => Promise<void>;
  /** Records in the spool of this process, reports still on their way, and records this process dead-lettered. */
  backlog: () => { spooled: number; sending: number; deadLettered: number };
  /** Settle's asks about unknown calls, answered by the rules' probes (verifier.ts). */
  verifications: Pick<SettleClient, "verifier" | "serveVerifications">;
  close: () => void;
};

export type LinkOptions = {
  url: string;
  key: string;
  spool: Spool;
  fastTimeoutMs: number;
  fetch?: typeof fetch;
  /** How often a non-empty spool is tried again. */
  drainEveryMs?: number;
  onError?: (message: string) => void;
};

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A failure of Settle itself: no answer, a 5xx, or a 429 (it asks to wait). Any other answer is Settle's word. */
export function isSettleDown(error: unknown): boolean {
  if (!(error instanceof SettleError)) return true;
  return error.status === 0 || error.status >= 500 || error.status === 429;
}

/** Settle refused the key itself: nothing sent with it will be taken until it is fixed, so records wait. */
const isKeyRefused = (error: unknown) => error instanceof SettleError && (error.status === 401 || error.status === 403);

/**
 * Settle refused what was sent (invalid, too large): sent again it would be
 * refused again. Any other 4xx (a 404 from a wrong address, a 408) says
 * nothing against the records, so they wait in the spool instead of being
 * dead-lettered.
 */
const isContentRefused = (error: unknown) => error instanceof SettleError && [400, 413, 422].includes(error.status);

function unreachable(error: unknown): Unreachable {
  return { unreachable: true, detail: describe(error).slice(0, 300) };
}

function refused(error: SettleError): Refused {
  const blame = isKeyRefused(error) ? "key" : isContentRefused(error) ? "call" : "setup";
  return {
    refused: true,
    status: error.status,
    code: error.code,
    detail: describe(error).slice(0, 300),
    key: blame === "key",
    blame,
  };
}

export function createSettleLink(options: LinkOptions): SettleLink {
  const fetchFn = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  const fast = createSettleClient({
    url: options.url,
    key: options.key,
    fetch: fetchFn,
    maxRetries: 1,
    timeoutMs: options.fastTimeoutMs,
    pollWaitS: 30,
  });
  const patient = createSettleClient({
    url: options.url,
    key: options.key,
    fetch: fetchFn,
    maxRetries: 2,
    timeoutMs: 10_000,
    batchDelayMs: 5,
  });
  const asked = createSettleClient({
    url: options.url,
    key: options.key,
    fetch: fetchFn,
    maxRetries: 1,
    timeoutMs: 10_000,
  });
  const sending = new Set<Promise<void>>();
  const onError = options.onError ?? (() => {});

  function deadLetter(records: SettleRecord[], reason: string): void {
    options.spool.deadLetter(records, reason);
    for (const record of records)
      onError(
        `Settle refused record ${record.event_id ?? "(no event_id)"} for good (${reason}); kept in ${options.spool.deadLetterFile} (${options.spool.deadLettered()} there from this gateway)`,
      );
  }

  /**
   * Sends records; throws when they should wait and be sent again (Settle
   * down, the key or the setup refused). A record Settle refuses for what it
   * is would be refused again: it goes to the dead-letter file, and the rest
   * are sent.
   */
  async function send(records: SettleRecord[]): Promise<void> {
    let results: Awaited<ReturnType<typeof patient.report>>;
    try {
      results = await patient.report(records);
    } catch (error) {
      if (!isContentRefused(error)) throw error;
      if (records.length === 1) return deadLetter(records, describe(error).slice(0, 500));
      // The request as a whole was refused (a 413 for one large record): find the one, one by one.
      for (const record of records) await send([record]);
      return;
    }
    const rejected = results.filter((r) => r.status === "rejected");
    for (const r of rejected) {
      const record = records[r.index] ?? records.find((x) => x.event_id === r.event_id);
      const reason = `${r.error?.code ?? "REJECTED"}: ${r.error?.agent_message ?? "no reason given"}`;
      if (record) deadLetter([record], reason);
      else onError(`Settle rejected record ${r.event_id}: ${reason}`);
    }
  }

  // One drain at a time; a caller that comes while one runs waits for it (flush must not return before it ends).
  let draining: Promise<void> | null = null;
  function drain(): Promise<void> {
    draining ??= options.spool
      .drain(send)
      .then(
        () => {},
        (error: unknown) => onError(`spool: ${describe(error)}`),
      )
      .finally(() => {
        draining = null;
      });
    return draining;
  }

  const timer = setInterval(() => void drain(), options.drainEveryMs ?? 2000);
  timer.unref();

  const ask = async <T>(work: () => Promise<T>): Promise<T | Unreachable | Refused> => {
    try {
      return await work();
    } catch (error) {
      if (isSettleDown(error)) return unreachable(error);
      const no = refused(error as SettleError);
      onError(
        no.blame === "key"
          ? `Settle refused the gateway's key (${no.detail}): writes are refused until the key is fixed`
          : no.blame === "setup"
            ? `Settle answered HTTP ${no.status} (${no.detail}): is SETTLE_URL Settle's address? Writes are refused until it answers`
            : `Settle refused: ${no.detail}`,
      );
      return no;
    }
  };
  /** Lookups around a denial (decisions, stored results) have no refusal of their own: not read is not read. */
  const settle = async <T>(work: () => Promise<T>): Promise<T | Unreachable> => {
    const got = await ask(work);
    return isRefused(got) ? { unreachable: true, detail: got.detail } : got;
  };

  return {
    guard: (input) => ask(() => fast.guard(input)),
    getDecision: (id) => settle(() => fast.getDecision(id)),
    findDecision: (id) => fast.getDecision(id).catch(() => null),
    awaitDecision: (id, timeoutMs, until) => settle(() => fast.awaitDecision(id, { timeout: timeoutMs, until })),
    getInvocation: (id) => settle(() => fast.getInvocation(id)),
    report: (records) => {
      const task = send(records).catch((error: unknown) => {
        onError(`report spooled (${records.length} records): ${describe(error)}`);
        options.spool.add(records);
      });
      sending.add(task);
      void task.finally(() => sending.delete(task));
    },
    reportNow: async (records) => {
      try {
        const sent = send(records);
        await patient.flush();
        await sent;
        return true;
      } catch (error) {
        onError(`report spooled (${records.length} records): ${describe(error)}`);
        options.spool.add(records);
        return false;
      }
    },
    spool: (records) => options.spool.add(records),
    flush: async () => {
      await patient.flush();
      await Promise.all([...sending]);
      // The drain running now may have begun while Settle was down and put its records back: one more sends them.
      await drain();
      await drain();
    },
    backlog: () => ({
      spooled: options.spool.pending(),
      sending: sending.size,
      deadLettered: options.spool.deadLettered(),
    }),
    verifications: asked,
    close: () => clearInterval(timer),
  };
}
