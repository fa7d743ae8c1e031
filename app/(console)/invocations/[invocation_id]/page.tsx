import type { Metadata } from "next";
import { elideId } from "@/components/ui/elide-id";
import { notFound } from "next/navigation";
import { InvocationDetail } from "@/components/invocation/invocation-detail";
import { invocationHref } from "@/lib/invocations/links";
import { RuntimeChoice } from "@/components/invocation/runtime-choice";
import { requireUser } from "@/lib/identity/session";
import { findInvocation } from "@/lib/invocations/read";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ invocation_id: string }>; searchParams: Promise<{ runtime?: string | string[] }> };

async function read({ params, searchParams }: Props) {
  const id = decodeURIComponent((await params).invocation_id);
  const runtime = (await searchParams).runtime;
  return { id, runtime: typeof runtime === "string" && runtime !== "" ? runtime : undefined };
}

export async function generateMetadata(props: Props): Promise<Metadata> {
  const { id } = await read(props);
  return { title: `Invocation ${elideId(id)} · Settle` };
}

export default async function InvocationPage(props: Props) {
  const { id, runtime } = await read(props);
  const { db } = await requireUser(
    "read",
    runtime ? invocationHref(id, runtime) : `/invocations/${encodeURIComponent(id)}`,
  );
  const now = new Date();
  const found = await findInvocation(db, {}, id, { runtime, now });
  if (found.kind === "missing") notFound();
  if (found.kind === "ambiguous") {
    return <RuntimeChoice kind="invocation" id={id} runtimes={found.runtimes} hrefFor={(r) => invocationHref(id, r)} />;
  }
  return (
    <InvocationDetail initial={found.value} renderedAt={now.toISOString()} stallWindowS={env().SETTLE_STALL_WINDOW_S} />
  );
}
