// Where a command writes. Injected, so tests run the CLI in-process and read
// exactly what a user would see on stdout and stderr.

export type Output = {
  write: (chunk: string) => unknown;
  isTTY?: boolean;
  columns?: number;
};

export type CliIo = {
  stdout: Output;
  stderr: Output;
  /** Waits between retries; tests pass a fast one. */
  sleep?: (ms: number) => Promise<void>;
};

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function printLine(out: Output, line = ""): void {
  out.write(`${line}\n`);
}
