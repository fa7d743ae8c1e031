import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { taskHref } from "@/lib/invocations/links";
import { RuntimeChoice } from "@/components/invocation/runtime-choice";
import { TaskDetail } from "@/components/invocation/task-detail";
import { requireUser } from "@/lib/identity/session";
import { findTaskPage } from "@/lib/invocations/task-page";
import { buildTimeline } from "@/lib/invocations/timeline-builder";
import { overviewOf } from "@/components/timeline/overview";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ task_id: string }>; searchParams: Promise<{ runtime?: string | string[] }> };

async function read({ params, searchParams }: Props) {
  const id = decodeURIComponent((await params).task_id);
  const runtime = (await searchParams).runtime;
  return { id, runtime: typeof runtime === "string" && runtime !== "" ? runtime : undefined };
}

export async function generateMetadata(props: Props): Promise<Metadata> {
  const { id } = await read(props);
  return { title: `Task ${id} · Settle` };
}

export default async function TaskPage(props: Props) {
  const { id, runtime } = await read(props);
  const { db } = await requireUser("read", runtime ? taskHref(id, runtime) : `/tasks/${encodeURIComponent(id)}`);
  const now = new Date();
  // A page, not the whole task: the first invocations with their chart lanes;
  // the rest of the list and the story are loaded on demand (task-detail.tsx).
  const found = await findTaskPage(db, {}, id, runtime, now);
  if (found.kind === "missing") notFound();
  if (found.kind === "ambiguous") {
    return <RuntimeChoice kind="task" id={id} runtimes={found.runtimes} hrefFor={(r) => taskHref(id, r)} />;
  }
  const { invocations, ...initial } = found.value;
  // The chart goes to the client as compact marks, not as the attempts it is drawn from.
  const overview = overviewOf(buildTimeline(invocations, { now, stallWindowS: env().SETTLE_STALL_WINDOW_S }));
  return <TaskDetail initial={initial} overview={overview} />;
}
