// Is this error the database being out of reach (as opposed to a bug)?
// Driver errors arrive wrapped (Prisma → driver adapter → pg → net), so the
// whole cause chain is searched.

const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "57014", // query_canceled: the statement timeout of an overloaded database
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "P1001", // can't reach database server
  "P1002", // timed out
  "P1017", // server closed the connection
  "P2024", // timed out fetching a connection from the pool
]);

const unreachableKinds = new Set([
  "DatabaseNotReachable",
  "DatabaseDoesNotExist",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

const unreachableMessages = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:is )?closed/i,
  /can't reach database server/i,
  /Client has encountered a connection error/i,
  /Cannot use a pool after calling end/i,
  /terminating connection due to administrator command/i,
  /Transaction API error: .*(closed|timeout)/i,
  /Unable to start a transaction in the given time/i,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === "string" && unreachableCodes.has(e.code)) return true;
    if (typeof e.kind === "string" && unreachableKinds.has(e.kind)) return true;
    if (typeof e.message === "string" && unreachableMessages.some((re) => re.test(e.message as string))) return true;
    if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = e.cause;
  }
  return false;
}

/** The SQLSTATE of a database error, wherever it is in the cause chain. */
export function sqlState(error: unknown): string | null {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** PostgreSQL refused a value (class 22, data exception) or a constraint (class 23): the data's fault, not Settle's. */
export function isDataError(error: unknown): boolean {
  const state = sqlState(error);
  return state !== null && (state.startsWith("22") || state.startsWith("23"));
}

/** A deadlock or serialization failure: the transaction may simply be run again. */
export function isRetryableConflict(error: unknown): boolean {
  const state = sqlState(error);
  return state === "40P01" || state === "40001";
}
