import { ApiError } from "@/lib/errors";

// Expected failures of a command. They are printed as one line, never with a
// stack: the exit code says what kind of failure it was.

export const EXIT_OK = 0;
/** Bad input, rejected records, a failed check. */
export const EXIT_FAILED = 1;
/** The server or the database could not be reached, or refused the credentials. */
export const EXIT_UNREACHABLE = 2;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILED,
  ) {
    super(message);
  }
}

/** The command line itself is wrong: the message is followed by a pointer to --help. */
export class UsageError extends CliError {}

/** Settle's typed refusals (no such runtime, catalog full) are one line and exit 1, like any refused input. */
export async function refusalsAsCliErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw new CliError(`${error.code}: ${error.message}`);
    throw error;
  }
}
