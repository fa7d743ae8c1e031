import { createPersonalToken } from "@/lib/identity/personal-tokens";
import { getUserByEmail } from "@/lib/identity/users";
import { stringOption, type Command } from "../args";
import { describeDatabase, withDatabase } from "../database";
import { CliError, UsageError } from "../errors";
import { printLine } from "../io";

export const tokensCreate: Command = {
  name: "tokens create",
  summary: "create a personal access token for a user and print it",
  help: `Usage: settle tokens create --email <email> [--name <name>] [--days <1-366>]

Creates a personal access token (stl_pat_…) that acts as that user, with their
role, and prints it and nothing else on stdout. It expires after --days
(default 90, or SETTLE_TOKEN_DEFAULT_DAYS). Use it as
'Authorization: Bearer <token>' to script what the console does.

Example:
  TOKEN=$(npm run -s settle -- tokens create --email ana@example.com --name laptop)`,
  options: { email: { type: "string" }, name: { type: "string" }, days: { type: "string" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const email = stringOption(values, "email");
    if (!email) throw new UsageError("--email is required");
    const name = (stringOption(values, "name") ?? "cli").trim();
    if (!name || name.length > 100) throw new UsageError("--name must be 1-100 characters");
    const daysText = stringOption(values, "days");
    const days = daysText === undefined ? undefined : Number(daysText);
    if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 366))
      throw new UsageError("--days must be a whole number from 1 to 366");
    const created = await withDatabase(async (db) => {
      const user = await getUserByEmail(db, email);
      if (!user)
        throw new CliError(`no user ${email}; create one with: settle users create --email ${email} --role operator`);
      if (!user.active) throw new CliError(`${email} is deactivated`);
      return { ...(await createPersonalToken(db, user.id, name, days)), user };
    });
    printLine(io.stdout, created.token);
    printLine(
      io.stderr,
      `Created token ${created.prefix} for ${created.user.email} (${created.user.role}) in ${describeDatabase()}, expiring ${created.expiresAt.toISOString()}. It is shown only once.`,
    );
    return 0;
  },
};
