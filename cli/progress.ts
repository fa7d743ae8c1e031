import { MultiBar, Presets } from "cli-progress";
import type { CliIo } from "./io";
import { formatCount as fmt } from "./table";

// Progress on stderr, so stdout stays a clean summary: a bar on a terminal,
// plain lines (at most one every few seconds) in CI logs and pipes.

export type ProgressState = {
  done: number;
  total: number;
  records: number;
  accepted: number;
  duplicates: number;
  rejected: number;
};

export type Progress = {
  update: (state: ProgressState) => void;
  /** A message that must stay visible (a retry, a wait). */
  note: (message: string) => void;
  stop: () => void;
};

const PLAIN_INTERVAL_MS = 2_000;

function describe(label: string, s: ProgressState): string {
  const percent = s.total > 0 ? Math.min(100, Math.floor((s.done / s.total) * 100)) : 100;
  return `${label}: ${fmt(s.records)} records sent (${percent}%): ${fmt(s.accepted)} accepted, ${fmt(s.duplicates)} duplicates, ${fmt(s.rejected)} rejected`;
}

function createBar(io: CliIo, label: string, total: number): Progress {
  const multi = new MultiBar(
    {
      stream: io.stderr as unknown as NodeJS.WritableStream,
      // Short enough for an 80-column terminal, where cli-progress cuts the line.
      format: `${label} {bar} {percentage}% {records} sent: {accepted} accepted, {duplicates} dup, {rejected} rejected`,
      barsize: 16,
      hideCursor: true,
      clearOnComplete: false,
      gracefulExit: true,
    },
    Presets.shades_classic,
  );
  const bar = multi.create(Math.max(total, 1), 0, { records: "0", accepted: "0", duplicates: "0", rejected: "0" });
  return {
    update: (s) =>
      bar.update(Math.min(s.done, Math.max(total, 1)), {
        records: fmt(s.records),
        accepted: fmt(s.accepted),
        duplicates: fmt(s.duplicates),
        rejected: fmt(s.rejected),
      }),
    note: (message) => multi.log(`${message}\n`),
    stop: () => {
      bar.update(Math.max(total, 1));
      multi.stop();
    },
  };
}

function createPlain(io: CliIo, label: string): Progress {
  let lastPrinted = 0;
  let latest: ProgressState | null = null;
  let printedLatest = true;
  return {
    update: (s) => {
      latest = s;
      printedLatest = false;
      const now = Date.now();
      if (now - lastPrinted < PLAIN_INTERVAL_MS) return;
      lastPrinted = now;
      printedLatest = true;
      io.stderr.write(`${describe(label, s)}\n`);
    },
    note: (message) => io.stderr.write(`${label}: ${message}\n`),
    stop: () => {
      if (latest && !printedLatest) io.stderr.write(`${describe(label, { ...latest, done: latest.total })}\n`);
    },
  };
}

export function createProgress(io: CliIo, label: string, total: number): Progress {
  return io.stderr.isTTY ? createBar(io, label, total) : createPlain(io, label);
}
