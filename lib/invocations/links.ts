// Console URLs for invocations and tasks. Ids are agent-chosen text: they are
// always encoded, and `runtime` is named so that an id used by two runtimes
// opens the right one.

export function invocationHref(invocationId: string, runtime: string, hash?: string): string {
  return `/invocations/${encodeURIComponent(invocationId)}?runtime=${encodeURIComponent(runtime)}${hash ? `#${hash}` : ""}`;
}

export function taskHref(taskId: string, runtime: string): string {
  return `/tasks/${encodeURIComponent(taskId)}?runtime=${encodeURIComponent(runtime)}`;
}

export const attemptAnchor = (index: number) => `attempt-${index + 1}`;

/** The invocation's signed evidence pack, answered as a file to save (GET /api/v1/invocations/{id}/evidence). */
export function evidenceHref(invocationId: string, runtime: string): string {
  return `/api/v1/invocations/${encodeURIComponent(invocationId)}/evidence?runtime=${encodeURIComponent(runtime)}&download=1`;
}
