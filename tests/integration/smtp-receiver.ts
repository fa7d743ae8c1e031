import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

// A real SMTP server for tests (nodemailer's smtp-server), on 127.0.0.1 and a random port: it takes every
// message, keeps its envelope, headers and text, and refuses the next `n` messages when told to fail.

export type Mail = { from: string; to: string[]; subject: string; headers: string; text: string };

export type SmtpReceiver = {
  url: string;
  mails: Mail[];
  failNext: (n: number) => void;
  close: () => Promise<void>;
};

function parse(raw: string, from: string, to: string[]): Mail {
  const split = raw.indexOf("\r\n\r\n");
  const headers = split >= 0 ? raw.slice(0, split) : raw;
  const body = split >= 0 ? raw.slice(split + 4) : "";
  // Headers fold long lines onto the next with leading white space.
  const unfolded = headers.replace(/\r\n[ \t]+/g, " ");
  const subject = /^subject: (.*)$/im.exec(unfolded)?.[1] ?? "";
  const quotedPrintable = /content-transfer-encoding: quoted-printable/i.test(unfolded);
  const text = quotedPrintable
    ? Buffer.from(
        body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        "latin1",
      ).toString("utf8")
    : body;
  return { from, to, subject: decodeWords(subject), headers: unfolded, text };
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= or ?B?), as nodemailer writes a subject that is not plain ASCII. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?utf-8\?([qb])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
      kind.toLowerCase() === "b"
        ? Buffer.from(text, "base64").toString("utf8")
        : Buffer.from(
            text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            "latin1",
          ).toString("utf8"),
    );
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: Mail[] = [];
  let failures = 0;
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate for the client to check.
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (failures > 0) {
          failures--;
          const error = Object.assign(new Error("mailbox unavailable, try later"), { responseCode: 451 });
          return callback(error);
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        mails.push(
          parse(
            Buffer.concat(chunks).toString("utf8"),
            from,
            session.envelope.rcptTo.map((r) => r.address),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    failNext: (n) => {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
