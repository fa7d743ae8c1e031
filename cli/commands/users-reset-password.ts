import { ApiError } from "@/lib/errors";
import { resetPassword } from "@/lib/identity/passwords";
import { getUserByEmail } from "@/lib/identity/users";
import { latestServerAddress } from "@/lib/identity/server-address";
import { env, publicUrl } from "@/lib/env";
import { requiredString, type Command } from "../args";
import { describeDatabase, withDatabase } from "../database";
import { CliError } from "../errors";
import { printLine } from "../io";

export const usersResetPassword: Command = {
  name: "users reset-password",
  summary: "reset someone's password (a lost first-run admin password too)",
  help: `Usage: settle users reset-password --email <email> [--link]

Prints a temporary password on stdout, once: the person signs in with it and
must choose their own before anything else. With --link, prints a one-time link
instead, where they choose one (it works once, for a day), on the address of
the server that started last on this database (SETTLE_PUBLIC_URL in this
shell wins). Either way they are signed out everywhere, and the reset is in
the audit trail (actor cli).

Example:
  npm run -s settle -- users reset-password --email admin@example.com`,
  options: { email: { type: "string" }, link: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const email = requiredString(values, "email").trim().toLowerCase();
    const mode = values.link ? "link" : "temporary";
    let base = { url: publicUrl(), from: "" };
    const answer = await withDatabase(async (db) => {
      const user = await getUserByEmail(db, email);
      if (!user) throw new CliError(`No user ${email} in ${describeDatabase()}.`);
      // The running server knows where people reach it; this shell, beside `npm run dev`, usually does not.
      const noted = env().SETTLE_PUBLIC_URL || mode === "temporary" ? null : await latestServerAddress(db);
      if (noted)
        base = { url: noted.address, from: ` (the address the server noted when it started, ${noted.seenAt})` };
      try {
        return await resetPassword(db, user.id, mode, { id: null, email: "cli" }, new Date(), base.url);
      } catch (error) {
        if (error instanceof ApiError) throw new CliError(`${error.code}: ${error.message}`);
        throw error;
      }
    });
    printLine(io.stdout, (answer.link ?? answer.temporary_password)!);
    printLine(
      io.stderr,
      mode === "link"
        ? `A one-time link for ${email} on ${base.url}${base.from}, shown only once; it works until ${answer.expires_at}.`
        : `A temporary password for ${email}, shown only once: they must change it when they sign in.`,
    );
    return 0;
  },
};
