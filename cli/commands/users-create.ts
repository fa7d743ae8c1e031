import { roles } from "@/lib/identity/roles";
import { createUser, newUserSchema, UserExistsError } from "@/lib/identity/users";
import { stringOption, type Command } from "../args";
import { describeDatabase, withDatabase } from "../database";
import { CliError, UsageError } from "../errors";
import { printLine } from "../io";

export const usersCreate: Command = {
  name: "users create",
  summary: "create a person who signs in to the console",
  help: `Usage: settle users create --email <email> --role <${roles.join("|")}> [--password <password>] [--name <name>]

Creates a user who signs in with email and password. Without --password, a
password is generated and printed once on stdout (share it; they can change it
later). Roles: viewer reads; operator also acts; manager also sees metrics and
escalations; admin also manages users and runtime keys.

Example:
  npm run -s settle -- users create --email ana@example.com --role operator`,
  options: {
    email: { type: "string" },
    role: { type: "string" },
    password: { type: "string" },
    name: { type: "string" },
  },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const parsed = newUserSchema.safeParse({
      email: stringOption(values, "email"),
      role: stringOption(values, "role"),
      password: stringOption(values, "password"),
      name: stringOption(values, "name"),
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`--${String(issue.path[0] ?? "email")}: ${issue.message}`);
    }
    try {
      const { user, password, generated } = await withDatabase((db) => createUser(db, parsed.data));
      if (generated) printLine(io.stdout, password);
      printLine(
        io.stderr,
        `Created ${user.role} ${user.email} in ${describeDatabase()}.${generated ? " The password above is shown only once." : ""}`,
      );
      return 0;
    } catch (error) {
      if (error instanceof UserExistsError) throw new CliError(error.message);
      throw error;
    }
  },
};
