import { createPersonalToken } from "@/lib/domain/personal-tokens";
import { findUserByEmail } from "@/lib/domain/users";
import { stringOption, type Command } from "../args";
import { describeDatabase, withDatabase } from "../database";
import { CliError, UsageError } from "../errors";
import { printLine } from "../io";

export const tokensCreate: Command = {
  name: "tokens create",
  summary: "create a personal access token for a user and print it",
  help: `Usage: settle tokens create --email <email> [--name <name>]

Creates a personal access token (stl_pat_…) that acts as that user, with their
role, and prints it and nothing else on stdout. Use it as
'Authorization: Bearer <token>' to script what the console does.

Example:
  TOKEN=$(npm run -s settle -- tokens create --email ana@example.com --name laptop)`,
  options: { email: { type: "string" }, name: { type: "string" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const email = stringOption(values, "email");
    if (!email) throw new UsageError("--email is required");
    const name = (stringOption(values, "name") ?? "cli").trim();
    if (!name || name.length > 100) throw new UsageError("--name must be 1-100 characters");
    const created = await withDatabase(async (db) => {
      const user = await findUserByEmail(db, email);
      if (!user) throw new CliError(`no user ${email}; create one with: settle users create --email ${email} --role operator`);
      if (!user.active) throw new CliError(`${email} is deactivated`);
      return { ...(await createPersonalToken(db, user.id, name)), user };
    });
    printLine(io.stdout, created.token);
    printLine(io.stderr, `Created token ${created.prefix} for ${created.user.email} (${created.user.role}) in ${describeDatabase()}. It is shown only once.`);
    return 0;
  },
};
