"use client";

import { bodiesOf, createApiClient } from "@/server/api-client";
import { stringifyExactJson } from "@/lib/json/exact";
import { apiClientError, fetchApi } from "@/lib/query/fetch";

// The console's one way to call Settle's API: the client typed from the
// routes' own declarations (server/api-client.ts, types only at run time), so
// a wrong path, parameter, query or body fails typecheck, and each answer has
// the type the route declares. A call answers a 2xx's body and throws
// ApiClientError (lib/query/fetch.ts) for anything else, as TanStack Query
// expects of a queryFn or mutationFn. Bodies are written as fetchApi reads
// answers, exactly: an integer past 2^53 held as a BigInt (lib/json) is sent
// with every digit; any other body is JSON.stringify's text.

export const api = bodiesOf(createApiClient(fetchApi, { writeJson: stringifyExactJson }), apiClientError);
