import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

// Where the CPU goes during a phase: the load generator (this process), the
// Next.js server's process group, PostgreSQL, and the machine as a whole.
// Read from /proc, so only on Linux; elsewhere every figure is null.

const TICK_S = 0.01; // USER_HZ is 100 on every Linux this runs on.

type Snapshot = { at: number; bench: number; server: number; postgres: number; busy: number; total: number } | null;
export type CpuUse = {
  bench: number;
  server: number;
  postgres: number;
  others: number;
  machine: number;
  cores: number;
} | null;

function statFields(pid: string): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces; fields restart after its closing parenthesis.
    const close = text.lastIndexOf(")");
    return [text.slice(text.indexOf("(") + 1, close), ...text.slice(close + 2).split(" ")];
  } catch {
    return null;
  }
}

function snapshot(serverGroup: number): Snapshot {
  let procs: string[];
  try {
    procs = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  let server = 0;
  let postgres = 0;
  for (const pid of procs) {
    const f = statFields(pid);
    if (!f) continue;
    // After the name: [1]=state [2]=ppid [3]=pgrp … [12]=utime [13]=stime.
    const ticks = Number(f[12]) + Number(f[13]);
    if (Number(f[3]) === serverGroup) server += ticks;
    else if (f[0] === "postgres") postgres += ticks;
  }
  const [cpuLine] = readFileSync("/proc/stat", "utf8").split("\n");
  // user nice system idle iowait irq softirq steal: idle and iowait are free, steal is not ours to count.
  const n = (cpuLine ?? "").trim().split(/\s+/).slice(1).map(Number);
  const idle = (n[3] ?? 0) + (n[4] ?? 0);
  const total = n.slice(0, 7).reduce((a, b) => a + b, 0);
  const self = process.cpuUsage();
  return {
    at: performance.now(),
    bench: (self.user + self.system) / 1e6,
    server: server * TICK_S,
    postgres: postgres * TICK_S,
    busy: (total - idle) * TICK_S,
    total: total * TICK_S,
  };
}

/** Starts measuring; the returned function gives cores used by each part since then. */
export function measureCpu(serverGroup: number): () => CpuUse {
  const start = snapshot(serverGroup);
  return () => {
    const end = snapshot(serverGroup);
    if (!start || !end) return null;
    const wall = (end.at - start.at) / 1000;
    const round = (v: number) => Math.round(v * 100) / 100;
    const bench = (end.bench - start.bench) / wall;
    const server = (end.server - start.server) / wall;
    const postgres = (end.postgres - start.postgres) / wall;
    const machine = ((end.busy - start.busy) / (end.total - start.total)) * cpus().length;
    // Everything else: other people's processes on a shared machine, and the kernel's own work.
    return {
      bench: round(bench),
      server: round(server),
      postgres: round(postgres),
      others: round(Math.max(0, machine - bench - server - postgres)),
      machine: round(machine),
      cores: cpus().length,
    };
  };
}
