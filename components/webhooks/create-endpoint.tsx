"use client";

import { useState } from "react";
import type { WebhookEndpointInfo } from "@/lib/webhooks/endpoints";
import { queryKeys } from "@/lib/query/keys";
import { useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { fieldText, FormDialog, type DialogProps } from "../ui/dialog";
import { SelectField, TextArea, TextField } from "../ui/field";

// Adding an endpoint for a runtime: a webhook (signed JSON events) or an OTLP/HTTP traces destination (each
// settled or escalated call as a span, docs/audit.md "Outcomes in your traces"), with the headers it sends.

export type Created = { endpoint: WebhookEndpointInfo; secret: string };

type Kind = "webhook" | "otlp";
type NewEndpoint = { runtime: string; url: string; kind: Kind; headers: string };

const kinds = [
  { value: "webhook", label: "Webhook: signed events" },
  { value: "otlp", label: "OTLP traces: a span per settled or escalated call" },
];

/** `Name: value` lines as a header map; a line without a name and a colon is refused with its number. */
export function parseHeaderLines(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon).trim();
    if (!name) throw new Error(`Headers, line ${i + 1}: write it as Name: value.`);
    headers[name] = line.slice(colon + 1).trim();
  });
  return headers;
}

export function CreateEndpointDialog({ runtimes, onClose, onDone }: { runtimes: string[] } & DialogProps<Created>) {
  const [kind, setKind] = useState<Kind>("webhook");
  const create = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: async ({ headers, ...input }: NewEndpoint) => {
      const body = input.kind === "otlp" ? { ...input, headers: parseHeaderLines(headers) } : input;
      return api.post("/api/v1/admin/webhooks", { body });
    },
    onSuccess: onDone,
  });
  const otlp = kind === "otlp";
  return (
    <FormDialog
      title="Add an endpoint"
      description="A webhook gets a signed event whenever one of the runtime's invocations settles or its decision changes; an OTLP destination gets each settled or escalated call as a span in your traces."
      submitLabel="Add endpoint"
      pendingLabel="Adding…"
      step={create}
      onSubmit={(form) =>
        create.mutate({
          runtime: fieldText(form, "runtime"),
          url: fieldText(form, "url"),
          kind,
          headers: String(form.get("headers") ?? ""),
        })
      }
      onClose={onClose}
    >
      <SelectField label="Runtime" name="runtime" required options={runtimes.map((r) => ({ value: r, label: r }))} />
      <SelectField
        label="Kind"
        name="kind"
        value={kind}
        onChange={(event) => setKind(event.target.value as Kind)}
        options={kinds}
      />
      <TextField
        label="URL"
        name="url"
        type="url"
        required
        placeholder={otlp ? "https://collector.example.com/v1/traces" : "https://agent.example.com/settle-events"}
        autoComplete="off"
        hint={
          otlp
            ? "The collector's OTLP/HTTP traces address (…/v1/traces): http:// or https:// at a public address (not localhost or a private network). Spans go as protobuf through the same outbox as webhooks."
            : "http:// or https:// at a public address (not localhost or a private network). The receiver answers any 2xx within 10 seconds."
        }
      />
      {otlp ? (
        <TextArea
          label="Headers"
          name="headers"
          autoComplete="off"
          spellCheck={false}
          placeholder="x-honeycomb-team: your-api-key"
          hint="One Name: value a line, sent with every export (a collector's API key). At most 20; Settle sets Content-Type and Host itself. Afterwards only their names are shown."
        />
      ) : null}
    </FormDialog>
  );
}
