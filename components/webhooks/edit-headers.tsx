"use client";

import type { WebhookEndpointInfo } from "@/lib/webhooks/endpoints";
import { queryKeys } from "@/lib/query/keys";
import { useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { DialogButton, FormDialog, type DialogProps } from "../ui/dialog";
import { TextArea } from "../ui/field";
import { parseHeaderLines } from "./create-endpoint";

// An OTLP destination's headers, replaced whole (a collector's rotated API key): Settle never answers their
// values, so the dialog shows the names it sends with the values masked, and the admin writes the set again.

const MASK = "••••••••";

/** The headers an endpoint sends, by name, each value masked. */
export function MaskedHeaders({ names }: { names: string[] }) {
  if (names.length === 0) return <p className="text-sm text-slate-600">It sends no headers of its own now.</p>;
  return (
    <ul aria-label="Headers sent now" className="space-y-0.5 rounded-md bg-slate-50 p-2 font-mono text-xs">
      {names.map((name) => (
        <li key={name}>
          {name}: <span aria-hidden="true">{MASK}</span>
          <span className="sr-only"> (value hidden)</span>
        </li>
      ))}
    </ul>
  );
}

export function EditHeadersDialog({
  endpoint,
  onClose,
  onDone,
}: { endpoint: WebhookEndpointInfo } & DialogProps<WebhookEndpointInfo>) {
  const save = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: (lines: string) =>
      api.patch("/api/v1/admin/webhooks/{endpoint_id}", {
        params: { endpoint_id: endpoint.id },
        body: { headers: parseHeaderLines(lines) },
      }),
    onSuccess: onDone,
  });
  return (
    <FormDialog
      title={`Headers for ${endpoint.runtime}'s OTLP destination`}
      description="The headers sent with every export, e.g. a collector's API key. Saving replaces all of them: exports from now on, retries included, carry only these."
      submitLabel="Save headers"
      pendingLabel="Saving…"
      step={save}
      onSubmit={(form) => save.mutate(String(form.get("headers") ?? ""))}
      onClose={onClose}
    >
      <MaskedHeaders names={endpoint.header_names} />
      <TextArea
        label="New headers"
        name="headers"
        autoComplete="off"
        spellCheck={false}
        placeholder="x-honeycomb-team: your-api-key"
        hint="One Name: value a line, values included (Settle does not show the ones it has); empty sends none. At most 20; Settle sets Content-Type and Host itself. Afterwards only their names are shown."
      />
    </FormDialog>
  );
}

/** Opens the dialog; `onDone` gets the endpoint as the API answered it (header names only). */
export function EditHeadersButton({
  endpoint,
  onDone,
  size = "sm",
}: {
  size?: "sm" | "md";
  endpoint: WebhookEndpointInfo;
  onDone?: (saved: WebhookEndpointInfo) => void;
}) {
  return (
    <DialogButton<WebhookEndpointInfo>
      size={size}
      dialog={(props) => <EditHeadersDialog endpoint={endpoint} {...props} />}
      onDone={onDone}
    >
      Edit headers<span className="sr-only"> of {endpoint.url}</span>
    </DialogButton>
  );
}

/** What a page says once the headers are saved. */
export const headersNotice = (saved: WebhookEndpointInfo) =>
  saved.header_names.length > 0
    ? `${saved.runtime}'s OTLP destination now sends the headers ${saved.header_names.join(", ")}.`
    : `${saved.runtime}'s OTLP destination now sends no headers of its own.`;
