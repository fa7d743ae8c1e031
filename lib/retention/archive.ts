import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { chmod, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import { claimPrivateDirectory, tightenTree } from "../db/private-dir";

// The archive (docs/operations.md "Data retention"): before retention drops a partition or deletes rows, it
// writes them to gzipped JSON Lines in the archive directory, one file per partition (or per batch of rows) and
// table, and lists each in the directory's manifest with its row count and SHA-256. A file is written under a
// temporary name, flushed to disk and only then renamed, so a crash never leaves a file that looks whole.
// Archives hold what the database holds (webhook signing secrets, password hashes): their folder is 0700 and
// every file in it 0600, whatever an older version or a umask left there (lib/db/private-dir.ts).
// The first line of a file says what it holds; every other line is one row as PostgreSQL's row_to_json gives it.

export const ARCHIVE_FORMAT = "settle-archive/1";
export const MANIFEST = "manifest.json";

export type ArchiveHeader = {
  format: typeof ARCHIVE_FORMAT;
  table: string;
  source: string;
  shelf: string | null;
  archived_at: string;
  migration: string | null;
};

/** A checkpoint an archive left in a hash chain (lib/chain/checkpoints.ts), as its manifest entry names it. */
export type ManifestCheckpoint = {
  chain: string;
  entries: number;
  last_hash: string;
  sha256: string;
  /** The evidence key that signed it. */
  key_id: string | null;
};

export type ArchiveEntry = {
  file: string;
  table: string;
  source: string;
  shelf: string | null;
  rows: number;
  bytes: number;
  sha256: string;
  archived_at: string;
  /** The checkpoints the file's rows left in the audit chains, when they were chained. */
  checkpoints?: ManifestCheckpoint[];
};

export type Manifest = { format: typeof ARCHIVE_FORMAT; files: ArchiveEntry[] };

export class ArchiveError extends Error {}

export async function readManifest(dir: string): Promise<Manifest> {
  const file = path.join(dir, MANIFEST);
  if (!existsSync(file)) return { format: ARCHIVE_FORMAT, files: [] };
  const parsed = JSON.parse(await readFile(file, "utf8")) as Manifest;
  if (parsed.format !== ARCHIVE_FORMAT) throw new ArchiveError(`${file} is not a Settle archive manifest`);
  return parsed;
}

/** Adds (or replaces) one file's entry; the manifest is replaced whole, never edited in place. */
export async function recordInManifest(dir: string, entry: ArchiveEntry): Promise<void> {
  const manifest = await readManifest(dir);
  const files = [...manifest.files.filter((f) => f.file !== entry.file), entry].sort((a, b) =>
    a.file.localeCompare(b.file),
  );
  await writeDurably(path.join(dir, MANIFEST), `${JSON.stringify({ format: ARCHIVE_FORMAT, files }, null, 2)}\n`);
}

async function writeDurably(file: string, text: string): Promise<void> {
  const partial = `${file}.partial`;
  await writeFile(partial, text, { mode: 0o600 });
  await closeDurably(partial, file);
}

/** The partial file made private, flushed and renamed to its name (a partial a crash left keeps its old mode). */
async function closeDurably(partial: string, file: string): Promise<void> {
  await chmod(partial, 0o600);
  await fsync(partial);
  await rename(partial, file);
}

/** The archive folder, this user's alone, and everything in it. */
function claimArchiveDirectory(dir: string): void {
  claimPrivateDirectory(dir, "The archive folder");
  tightenTree(dir);
}

async function fsync(file: string): Promise<void> {
  const handle = await open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

/**
 * Writes one archive file from pages of rows (each row one line of JSON text) and lists it in the manifest.
 * Writing the same file again replaces it: a retirement that stopped part-way writes its file once more.
 */
export async function writeArchive(
  dir: string,
  file: string,
  header: Omit<ArchiveHeader, "format">,
  pages: AsyncIterable<string[]>,
  checkpoints: ManifestCheckpoint[] = [],
): Promise<ArchiveEntry> {
  claimArchiveDirectory(dir);
  const target = path.join(dir, file);
  const partial = `${target}.partial`;
  let rows = 0;
  async function* lines() {
    yield `${JSON.stringify({ format: ARCHIVE_FORMAT, ...header })}\n`;
    for await (const page of pages) {
      rows += page.length;
      if (page.length > 0) yield `${page.join("\n")}\n`;
    }
  }
  await pipeline(Readable.from(lines()), createGzip(), createWriteStream(partial, { mode: 0o600 }));
  await closeDurably(partial, target);
  const entry: ArchiveEntry = {
    file,
    table: header.table,
    source: header.source,
    shelf: header.shelf,
    rows,
    bytes: (await stat(target)).size,
    sha256: await sha256Of(target),
    archived_at: header.archived_at,
    ...(checkpoints.length > 0 ? { checkpoints } : {}),
  };
  await recordInManifest(dir, entry);
  return entry;
}

/** Whether a listed file is there with the bytes it was written with. */
export async function verifyArchive(dir: string, entry: ArchiveEntry): Promise<"ok" | "missing" | "damaged"> {
  const file = path.join(dir, entry.file);
  if (!existsSync(file)) return "missing";
  return (await sha256Of(file)) === entry.sha256 ? "ok" : "damaged";
}

/** A file's header and its rows, in pages. Refuses a file whose checksum disagrees with its manifest. */
export async function readArchive(
  file: string,
  pageSize = 2_000,
): Promise<{ header: ArchiveHeader; pages: AsyncGenerator<Record<string, unknown>[]> }> {
  if (!existsSync(file)) throw new ArchiveError(`${file} does not exist`);
  const dir = path.dirname(file);
  const entry = (await readManifest(dir)).files.find((f) => f.file === path.basename(file));
  if (entry && (await verifyArchive(dir, entry)) !== "ok") {
    throw new ArchiveError(`${file} does not match the SHA-256 its manifest lists: the file is damaged`);
  }
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const header = first.done ? null : (JSON.parse(first.value) as ArchiveHeader);
  if (!header || header.format !== ARCHIVE_FORMAT) throw new ArchiveError(`${file} is not a Settle archive`);
  async function* pages() {
    let page: Record<string, unknown>[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (next.value.trim() === "") continue;
      page.push(JSON.parse(next.value) as Record<string, unknown>);
      if (page.length >= pageSize) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }
  return { header, pages: pages() };
}

/** Removes a file left by a write that did not finish. */
export async function removePartial(dir: string, file: string): Promise<void> {
  await rm(path.join(dir, `${file}.partial`), { force: true });
}
