import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

// First-load JavaScript of a page: every script file its HTML makes the
// browser fetch (`<script src>` without `nomodule`, and script preloads),
// read from the build folder and gzipped at level 9, as Next.js's own size
// report did. Chunks a page imports later (dialogs on first open) are not in it.

export type FirstLoad = {
  files: Array<{ file: string; bytes: number; gzip_bytes: number }>;
  bytes: number;
  gzip_bytes: number;
};

export function scriptFiles(html: string): string[] {
  const found = new Set<string>();
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
    const src = /\bsrc="([^"]+)"/.exec(tag)?.[1];
    if (src && !/\bnomodule\b/i.test(tag)) found.add(src);
  }
  for (const tag of html.match(/<link\b[^>]*>/g) ?? []) {
    const href = /\bhref="([^"]+)"/.exec(tag)?.[1];
    if (href && /\bas="script"/.test(tag) && /\brel="(preload|modulepreload)"/.test(tag)) found.add(href);
  }
  return [...found].filter((src) => src.startsWith("/_next/static/") && src.split("?")[0]!.endsWith(".js"));
}

export function measureFirstLoad(html: string, distDir: string): FirstLoad {
  const files = scriptFiles(html).map((src) => {
    const content = readFileSync(path.join(distDir, "static", src.split("?")[0]!.slice("/_next/static/".length)));
    return { file: src, bytes: content.length, gzip_bytes: gzipSync(content, { level: 9 }).length };
  });
  return {
    files,
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    gzip_bytes: files.reduce((n, f) => n + f.gzip_bytes, 0),
  };
}
