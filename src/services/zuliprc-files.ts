import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * `create-user` and the first start write credentials files (`zuliprc`, `zuliprc-<email>`, or a
 * name given with --zuliprc) into the data directory: an API key and an address. Erasing the person
 * removes every such file there that names one of their addresses. Returns the files removed.
 */
export async function removeZuliprcFilesOf(dataDir: string, emails: readonly string[]): Promise<string[]> {
  const wanted = new Set(emails.map((email) => email.toLowerCase()));
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names.filter((n) => n.startsWith('zuliprc'))) {
    const file = path.join(dataDir, name);
    const text = await readFile(file, 'utf8').catch(() => '');
    const email = /^email=(.*)$/m.exec(text)?.[1]?.trim().toLowerCase();
    if (email && wanted.has(email)) {
      await rm(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}
