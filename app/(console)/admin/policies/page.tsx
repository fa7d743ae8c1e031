import type { Metadata } from "next";
import { PoliciesAdmin } from "@/components/admin/policies-admin";
import { requireUser } from "@/lib/identity/session";
import { listPolicies } from "@/lib/policies/policies";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Policies · Settle" };

// Everyone signed in reads the policies (they explain what Settle does on its own); admins edit them.
export default async function PoliciesPage() {
  const { db } = await requireUser("read", "/admin/policies");
  return <PoliciesAdmin initial={await listPolicies(db)} />;
}
