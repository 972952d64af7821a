// The pg client every pool connection uses. Two things on top of pg.Client:
// - statements marked by runPrepared run as named (prepared) statements;
// - a transaction's BEGIN is not sent on its own: it rides with the transaction's first statement,
//   in the same write and under the same Sync (the extended protocol lets a client send several
//   statements before one Sync), so a transaction costs one round trip less. A fold pass is one per
//   send, and on a machine where a socket write is dear a round trip is a good part of a send's cost.
import pg from 'pg';
import { PREPARED_MARK, preparedName } from './prepared.js';

type Callback = (error: Error | undefined, result: unknown) => void;
interface Connection {
  parse(config: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  execute(config: { portal: string }): void;
}

/** What kysely gets for a BEGIN not yet sent (it reads only rows and the command). */
const DEFERRED_BEGIN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

/** A statement sent with a BEGIN before it: the BEGIN's completion is not one of its results. */
class QueryAfterBegin extends pg.Query {
  private beginCompleted = false;

  prepare(connection: Connection): void {
    connection.parse({ text: 'BEGIN', name: '', types: [] });
    connection.bind({ portal: '', statement: '', values: [] });
    connection.execute({ portal: '' });
    (pg.Query.prototype as unknown as { prepare(c: Connection): void }).prepare.call(this, connection);
  }

  handleCommandComplete(message: unknown, connection: unknown): void {
    if (!this.beginCompleted) {
      this.beginCompleted = true;
      return;
    }
    (pg.Query.prototype as unknown as { handleCommandComplete(m: unknown, c: unknown): void }).handleCommandComplete.call(this, message, connection);
  }
}

export class PreparingClient extends pg.Client {
  /** kysely asked for BEGIN and nothing has been sent since. */
  private beginPending = false;

  // One signature for pg's many overloads; kysely calls query(text, values) and awaits the promise.
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const query = super.query as (...a: unknown[]) => never;
    const plain = args.length <= 2 && typeof text === 'string' && (values === undefined || Array.isArray(values));
    if (!plain) return this.sendingBegin(() => query.apply(this, args));
    const parameters = (values ?? []) as unknown[];
    const config = text.startsWith(PREPARED_MARK) ? { name: preparedName(text), text, values: parameters } : { text, values: parameters };
    if (/^begin$/i.test(text) && parameters.length === 0 && !this.beginPending) {
      this.beginPending = true;
      return Promise.resolve(DEFERRED_BEGIN) as never;
    }
    if (this.beginPending && /^(commit|rollback)$/i.test(text)) {
      // Nothing was sent since BEGIN: there is no transaction to end.
      this.beginPending = false;
      return Promise.resolve({ command: text.toUpperCase(), rowCount: null, rows: [], fields: [] }) as never;
    }
    // Only a statement that goes by the extended protocol can carry the BEGIN (a parameterless
    // text may hold several statements, which that protocol refuses).
    if (this.beginPending && ('name' in config || parameters.length > 0)) {
      this.beginPending = false;
      return new Promise((resolve, reject) => {
        const callback: Callback = (error, result) => (error ? reject(error) : resolve(result));
        query.call(this, new QueryAfterBegin(config, undefined, callback));
      }) as never;
    }
    return this.sendingBegin(() => query.call(this, config));
  }

  /** Sends a pending BEGIN on its own before `send`. */
  private sendingBegin(send: () => never): never {
    if (!this.beginPending) return send();
    this.beginPending = false;
    const query = super.query as (...a: unknown[]) => Promise<unknown>;
    return query.call(this, 'BEGIN').then(() => send()) as never;
  }
}
