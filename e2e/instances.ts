import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { freePort, healthy, PG_ADMIN_URL, startNext, waitFor } from "./server";

// Several app instances on one PostgreSQL database, as docs/operations.md ("More app instances") runs
// Settle behind a load balancer: each a real `npm start` (bin/settle-server.mjs) of this checkout's build,
// a process and a port of its own, sharing nothing but the database and the settings an operator gives
// every instance alike (the auth secret). For tests of what must hold across instances: a setting
// written on one in force on another, jobs that run on all of them doing each piece of work once.
//
//   const cluster = await startInstances([{ name: "a", env: { SETTLE_BACKGROUND_JOBS: "off" } }, { name: "b" }]);
//   const answer = await cluster.api(cluster.instance("b"), "GET", "/api/v1/queue", { token: cluster.adminToken });
//   await cluster.stop();

export type InstanceSpec = { name: string; env?: Record<string, string> };

export type Instance = {
  name: string;
  baseURL: string;
  /** The server's process id (its process group: Next.js may start children). */
  pid: () => number;
  /** What it printed, stdout and stderr. */
  output: () => string;
  /** Stops it (SIGTERM to its process group) and waits until it has exited. */
  stop: () => Promise<void>;
  /** Stops it and starts it again on the same port, with `env` over what it had. */
  restart: (env?: Record<string, string>) => Promise<void>;
};

export type Answer = { status: number; body: any; headers: Headers; ms: number };
export type Call = { key?: string; token?: string; body?: unknown; headers?: Record<string, string> };

export type Instances = {
  databaseUrl: string;
  databaseName: string;
  instances: Instance[];
  instance: (name: string) => Instance;
  /** The runtime the setup made, and its key. */
  runtime: string;
  key: string;
  /** An admin, and a personal access token acting as them (Bearer). */
  adminEmail: string;
  adminToken: string;
  /** Runs the `settle` CLI against the database; resolves with its stdout. */
  cli: (args: string[]) => Promise<string>;
  /** One JSON request to an instance, with a runtime key or a personal token. */
  api: (instance: Instance, method: string, path: string, call?: Call) => Promise<Answer>;
  /** Stops every instance and drops the database. */
  stop: () => Promise<void>;
};

function psql(sql: string): void {
  const run = spawnSync("psql", [PG_ADMIN_URL, "-qc", sql], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`psql ${sql}: ${run.stderr}`);
}

/** The CLI, asynchronously (each run loads the sources through tsx: seconds; several run side by side). */
function settle(databaseUrl: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/settle.mjs", ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`settle ${args.join(" ")} failed (${code}): ${err}`)),
    );
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

async function launch(spec: InstanceSpec, base: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  let env = { ...base, ...spec.env };
  let started = startNext(port, env);
  const up = async () =>
    waitFor(
      `Instance ${spec.name} did not become healthy`,
      async () => ((await healthy(baseURL)) ? true : null),
      started.output,
      started.child,
    );
  await up();
  const stop = async () => {
    try {
      process.kill(-started.child.pid!, "SIGTERM");
    } catch {
      /* already gone */
    }
    await exited(started.child);
  };
  return {
    name: spec.name,
    baseURL,
    pid: () => started.child.pid!,
    output: () => started.output(),
    stop,
    restart: async (more = {}) => {
      await stop();
      env = { ...env, ...more };
      started = startNext(port, env);
      await up();
    },
  };
}

/**
 * A fresh database (migrated, with an admin, their token and one runtime key), then one instance per spec,
 * started side by side. Every instance runs background jobs every second unless its env says otherwise.
 */
export async function startInstances(specs: InstanceSpec[], shared: Record<string, string> = {}): Promise<Instances> {
  const databaseName = `settle_e2e_many_${randomBytes(5).toString("hex")}`;
  psql(`CREATE DATABASE ${databaseName}`);
  const databaseUrl = `postgresql://postgres@127.0.0.1:5432/${databaseName}`;
  const running: Instance[] = [];
  const drop = () => psql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  try {
    const cli = (args: string[]) => settle(databaseUrl, args);
    await cli(["migrate"]);
    const adminEmail = "admin@example.com";
    const runtime = `rt-${randomBytes(3).toString("hex")}`;
    const [key, adminToken] = await Promise.all([
      cli(["keys", "create", runtime]),
      cli([
        "users",
        "create",
        "--email",
        adminEmail,
        "--role",
        "admin",
        "--password",
        randomBytes(12).toString("hex"),
      ]).then(() => cli(["tokens", "create", "--email", adminEmail])),
    ]);
    const base = {
      DATABASE_URL: databaseUrl,
      // Behind one load balancer every instance has the same secret: a session signed by one is read by another.
      SETTLE_AUTH_SECRET: randomBytes(24).toString("hex"),
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_JOBS_INTERVAL_S: "1",
      ...shared,
    };
    running.push(...(await Promise.all(specs.map((spec) => launch(spec, base)))));
    const instances = running;
    return {
      databaseUrl,
      databaseName,
      instances,
      instance: (name) => {
        const found = instances.find((i) => i.name === name);
        if (!found) throw new Error(`no instance ${name}`);
        return found;
      },
      runtime,
      key: key.split("\n").at(-1)!.trim(),
      adminEmail,
      adminToken: adminToken.split("\n").at(-1)!.trim(),
      cli,
      api: async (instance, method, path, call = {}) => {
        const headers: Record<string, string> = { accept: "application/json", ...call.headers };
        const credential = call.key ?? call.token;
        if (credential) headers.authorization = `Bearer ${credential}`;
        if (call.body !== undefined) headers["content-type"] ??= "application/json";
        const started = performance.now();
        const res = await fetch(`${instance.baseURL}${path}`, {
          method,
          headers,
          body:
            call.body === undefined ? undefined : typeof call.body === "string" ? call.body : JSON.stringify(call.body),
        });
        const text = await res.text();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON: kept as text */
        }
        return { status: res.status, body, headers: res.headers, ms: performance.now() - started };
      },
      stop: async () => {
        await Promise.all(instances.map((i) => i.stop()));
        drop();
      },
    };
  } catch (error) {
    await Promise.all(running.map((i) => i.stop()));
    drop();
    throw error;
  }
}
