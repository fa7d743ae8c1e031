import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import type { Answer } from "./answer";
import type { ResolvedAddress } from "./safe-url";

// The POST itself, connected to exactly the address that was checked. fetch
// would resolve the name again, and a name whose DNS answer changes between
// the check and the connection (DNS rebinding) would reach whatever it names
// the second time. node:http asks `lookup` for the address and still sends the
// name as Host and as TLS SNI, so the receiver and its certificate see the URL.

export type PostInit = {
  method: "POST";
  headers: Record<string, string>;
  body: string | Uint8Array;
  /** Never followed (node:http does not follow any); said so fetch, if injected, does the same. */
  redirect: "manual";
  signal: AbortSignal;
  /** Where to connect: checked by checkWebhookUrl. */
  address: ResolvedAddress;
};

/** How a delivery is sent; tests pass their own (fetch satisfies it too, without the pinning). */
export type PostFn = (url: string, init: PostInit) => Promise<Answer>;

// Only what the log reads; the rest of the receiver's headers is not Settle's business.
const KEPT_HEADERS = ["content-type", "content-length", "location"] as const;

function answerOf(res: IncomingMessage): Answer {
  const headers = new Headers();
  for (const name of KEPT_HEADERS) {
    const value = res.headers[name];
    if (typeof value !== "string") continue;
    try {
      headers.set(name, value);
    } catch {
      // A value Headers refuses (control characters) is as good as absent.
    }
  }
  return { status: res.statusCode ?? 0, headers, body: Readable.toWeb(res) as unknown as ReadableStream<Uint8Array> };
}

export const pinnedPost: PostFn = (url, init) =>
  new Promise<Answer>((resolve, reject) => {
    const target = new URL(url);
    const { address, family } = init.address;
    // With autoSelectFamily (node's default) net asks for every address at once.
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    // agent: false, so no kept-alive socket to an address checked for another try is reused.
    const req = send(
      target,
      { method: init.method, headers: init.headers, signal: init.signal, lookup, agent: false },
      (res) => resolve(answerOf(res)),
    );
    req.on("error", reject);
    req.end(init.body);
  });
