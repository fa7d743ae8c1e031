import { receiverRecipe, verifyRecipe } from "@/lib/webhooks/verify-recipe";
import { CopyButton } from "../admin/copy-button";

// How to check a delivery is Settle's: the header, what is signed, and the
// recipe in Node (tested against Settle's own signer).

function Code({ text, label }: { text: string; label: string }) {
  return (
    <div className="space-y-1">
      <pre className="max-h-80 overflow-auto rounded-md bg-slate-900 p-3 font-mono text-xs leading-relaxed text-slate-100">
        {text}
      </pre>
      <CopyButton text={text} label={label} />
    </div>
  );
}

export function VerifyHelp() {
  return (
    <div className="space-y-3 text-sm text-slate-700">
      <p>
        Every event is a <span className="font-mono">POST</span> with a JSON body and three headers:{" "}
        <span className="font-mono">Settle-Event-Id</span>, <span className="font-mono">Settle-Event-Type</span> and{" "}
        <span className="font-mono">Settle-Signature: t=&lt;unix seconds&gt;,v1=&lt;hex&gt;</span>, where{" "}
        <span className="font-mono">v1</span> is the HMAC-SHA256, keyed with the endpoint&apos;s secret, of{" "}
        <span className="font-mono">&lt;t&gt;.&lt;raw body&gt;</span>. Compute it over the bytes you received (before
        parsing), compare in constant time, and refuse a <span className="font-mono">t</span> more than five minutes
        away from your clock, so a captured delivery cannot be replayed.
      </p>
      <Code text={verifyRecipe} label="Copy function" />
      <p>
        A receiver that uses it; answer any 2xx within 10 seconds, or Settle tries again later with exponential
        back-off:
      </p>
      <Code text={receiverRecipe} label="Copy receiver" />
    </div>
  );
}
