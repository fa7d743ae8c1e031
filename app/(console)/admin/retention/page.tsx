import type { Metadata } from "next";
import { RetentionAdmin } from "@/components/admin/retention-admin";
import { requireUser } from "@/lib/identity/session";
import { getRetention } from "@/lib/retention/settings";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Data retention · Settle" };

// Everyone signed in reads how long history is kept; admins edit it.
export default async function RetentionPage() {
  const { db } = await requireUser("read", "/admin/retention");
  return <RetentionAdmin initial={await getRetention(db)} />;
}
