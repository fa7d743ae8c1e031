import { z } from "zod";

// How the API spells a list in one query parameter (a filter's statuses, effect classes, actions): comma-separated,
// blanks around and between the commas ignored, at least one item, each parsed by `item`.
export const commaList = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1));
