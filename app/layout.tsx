import type { Metadata } from "next";
import localFont from "next/font/local";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { Providers } from "@/components/providers";
import "./globals.css";

const inter = localFont({
  src: "../node_modules/@fontsource-variable/inter/files/inter-latin-wght-normal.woff2",
  variable: "--font-inter",
  display: "swap",
});

export const metadata: Metadata = {
  title: "Settle",
  description: "The operator console for AI-agent tool actions whose outcome is uncertain.",
};

// Runs first, with the request's CSP nonce (proxy.ts), for two libraries that
// would otherwise trip the strict CSP in the browser:
// - Radix's scroll lock (dialogs, menus) adds a <style> element, with the nonce
//   it finds in __webpack_nonce__; without one the browser refuses it.
// - zod probes for eval with `Function("")` to compile parsers; the probe is
//   caught, but the browser still reports a violation. jitless skips it.
const cspSupport =
  "window.__webpack_nonce__=document.currentScript.nonce;" +
  "(globalThis.__zod_globalConfig=globalThis.__zod_globalConfig||{}).jitless=true;";

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Reading the request also makes every page render per request, the 404 page
  // included, so Next.js can put each request's nonce on its scripts.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    <html lang="en" className={inter.variable}>
      <head>{nonce ? <script nonce={nonce} dangerouslySetInnerHTML={{ __html: cspSupport }} /> : null}</head>
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
