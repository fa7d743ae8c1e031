import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from "node:fs";
import path from "node:path";

// Settle's folders on this machine hold what another local account must not read: the embedded database (its
// write-ahead log holds every row, the admins' password hashes included), the session-signing secret, the
// embedded database's socket, exports and retention archives (webhook signing secrets, password hashes).
// Settle creates its folders 0700 and its files 0600; a folder an older version made, or a umask let others
// into, is tightened when Settle opens it (PGlite itself writes its first files 0666); and a folder Settle
// cannot make private — another account owns it, or its file system ignores modes — stops Settle with one
// line, as PostgreSQL refuses a data directory others can enter.

export class PrivateDirectoryError extends Error {}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;
const currentUid = () => process.getuid?.();

/**
 * Makes `dir` (and any missing parent) a folder only this user can enter, or throws why it cannot be.
 * `noLink`: the folder itself must not be a symbolic link (one in a shared folder such as /tmp, which
 * another user could have made point anywhere).
 */
export function claimPrivateDirectory(dir: string, what: string, options: { noLink?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const read = (): Stats => (options.noLink ? lstatSync(dir) : statSync(dir));
  const stat = read();
  if (stat.isSymbolicLink())
    throw new PrivateDirectoryError(`${what} ${dir} is a symbolic link; remove it and start again.`);
  if (!stat.isDirectory()) throw new PrivateDirectoryError(`${what} ${dir} is not a folder.`);
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) {
    throw new PrivateDirectoryError(
      `${what} ${dir} belongs to another user (uid ${stat.uid}; Settle runs as uid ${uid}): another account could read or replace it. Use a folder of your own.`,
    );
  }
  if ((stat.mode & 0o077) === 0) return;
  try {
    chmodSync(dir, 0o700);
  } catch {
    // Judged just below, by what the folder's mode is now.
  }
  const after = read();
  if ((after.mode & 0o077) !== 0) {
    throw new PrivateDirectoryError(
      `${what} ${dir} can be entered by other users (mode ${octal(after.mode)}) and Settle could not make it private: run chmod 700 ${dir}, or use a folder on a file system that keeps permissions.`,
    );
  }
}

/** Every file under `dir` made 0600 and every folder 0700 (symbolic links are left as they are, never followed). */
export function tightenTree(dir: string): void {
  const pending = [dir];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) pending.push(file);
      if (entry.isSymbolicLink() || !(entry.isDirectory() || entry.isFile())) continue;
      const mode = lstatSync(file).mode;
      if ((mode & 0o077) !== 0) chmodSync(file, entry.isDirectory() ? 0o700 : mode & 0o700);
    }
  }
}

/**
 * The embedded database's folders, claimed: its data directory and, in the default layout (`.settle/data`),
 * the `.settle` folder beside it that holds the session secret, the archive and the socket. A data directory
 * elsewhere leaves its parent as it is: that folder is the operator's.
 */
export function claimEmbeddedDirectories(dataDir: string): void {
  const parent = path.dirname(path.resolve(dataDir));
  if (path.basename(parent) === ".settle") claimPrivateDirectory(parent, "Settle's folder");
  claimPrivateDirectory(dataDir, "The embedded database's folder");
}
