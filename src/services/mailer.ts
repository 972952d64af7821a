import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface MailLog {
  info(details: Record<string, unknown>, message: string): void;
}

/** Sends mail. The only transport so far writes each mail to a file (no SMTP server is configured). */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/** Writes every mail as an RFC 5322-style text file under `dir` and logs where it went. */
export function fileMailer(dir: string, from: string, log: MailLog): Mailer {
  return {
    async send(mail) {
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${Date.now()}-${randomUUID()}.eml`);
      const headers = [`From: ${from}`, `To: ${mail.to}`, `Subject: ${mail.subject}`, `Date: ${new Date().toUTCString()}`];
      await writeFile(file, `${headers.join('\n')}\n\n${mail.text}\n`, { mode: 0o600 });
      log.info({ to: mail.to, subject: mail.subject, file }, 'email written to file (no mail server configured)');
    },
  };
}

export function mailerFor(config: Config, log: MailLog): Mailer {
  const host = new URL(config.externalUrl).hostname;
  return fileMailer(path.join(config.dataDir, 'emails'), `noreply@${host}`, log);
}
