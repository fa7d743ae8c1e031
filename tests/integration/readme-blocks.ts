// Reads a Markdown file's runnable parts, for the README check
// (readme.test.ts): under each heading, the fenced blocks
// marked `sh run` (commands) and `<lang> file=NAME` (a file the reader saves),
// in order, turned into one bash script per section. And every relative link,
// to check that it resolves.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** Sections (by their `### ` heading) with the bash script their marked blocks make. */
export type Section = { title: string; script: string[] };

export function runnableSections(markdown: string): Section[] {
  const sections: Section[] = [];
  let current: Section | null = null;
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const heading = /^#{2,3} (.+)$/.exec(lines[i]!);
    if (heading) {
      current = { title: heading[1]!.trim(), script: [] };
      sections.push(current);
      continue;
    }
    const fence = /^```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!fence || !current) continue;
    const body: string[] = [];
    for (i += 1; i < lines.length && lines[i] !== "```"; i += 1) body.push(lines[i]!);
    const file = /(?:^|\s)file=(\S+)/.exec(fence[2]!);
    if (fence[2]!.split(/\s+/).includes("run")) current.script.push(...body);
    else if (file) current.script.push(`cat > ${file[1]!} <<'SETTLE_README_EOF'`, ...body, "SETTLE_README_EOF");
  }
  return sections.filter((s) => s.script.length > 0);
}

const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Every relative link of `file` that does not resolve: a missing file, or a heading its target does not have. */
export function brokenLinks(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  const broken: string[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target)) continue;
    const [where = "", anchor] = target.split("#");
    const resolved = where ? path.resolve(path.dirname(file), where) : file;
    if (!existsSync(resolved)) broken.push(target);
    else if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(target);
  }
  return broken;
}
