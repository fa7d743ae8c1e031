import { readFileSync, rmSync, writeFileSync } from "node:fs";

// PGlite has no lock of its own: two processes on one data directory corrupt
// it. A pid file next to the directory turns that into a clear error.

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is open in another process (pid ${pid}, probably \`npm run dev\` or \`npm start\`). ` +
        "Stop it first, or run Settle on PostgreSQL with DATABASE_URL.",
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the lock for this process; returns the function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  const file = `${dataDir.replace(/\/+$/, "")}.lock`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 });
      const release = () => rmSync(file, { force: true });
      process.once("exit", release);
      return () => {
        process.removeListener("exit", release);
        release();
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(file, "utf8").trim());
      if (holder && holder !== process.pid && alive(holder)) throw new DataDirInUseError(dataDir, holder);
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not lock the embedded database in ${dataDir}.`);
}
