// The pg client every pool connection uses. Three things on top of pg.Client:
// - statements marked by runPrepared run as named (prepared) statements;
// - a transaction's BEGIN is not sent on its own: it rides with the transaction's first statement,
//   in the same write and under the same Sync (the extended protocol lets a client send several
//   statements before one Sync), so a transaction costs one round trip less. A fold pass is one per
//   send, and on a machine where a socket write is dear a round trip is a good part of a send's cost;
// - a statement marked by ridesWithNext, made before anything of its transaction was sent, rides
//   the same way, after the BEGIN. It must report failure by raising an error: its caller gets no
//   rows, and an error stops the statements after it under the same Sync and aborts the transaction,
//   so the next statement fails with it (a fold pass's claim, which must stop the pass if it fails).
import { createRequire } from 'node:module';
import pg from 'pg';
import { PREPARED_MARK, RIDES_WITH_NEXT_MARK, preparedName } from './prepared.js';

/** pg's own conversion of a value to its wire form (arrays, dates, buffers), as its statements use. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

type Callback = (error: Error | undefined, result: unknown) => void;
interface Connection {
  parse(config: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: unknown[]; valueMapper: unknown }): void;
  execute(config: { portal: string }): void;
}

/** What kysely gets for a BEGIN, or a statement riding with the next, not yet sent (it reads only rows and the command). */
const DEFERRED_BEGIN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };
const DEFERRED_RIDER = { command: 'SELECT', rowCount: 0, rows: [], fields: [] };

/** A statement as the extended protocol sends it. */
interface Statement {
  text: string;
  values: unknown[];
  /** A prepared statement's name; unset: unnamed, parsed with each use. */
  name?: string;
}

const BEGIN: Statement = { text: 'BEGIN', values: [] };

/**
 * A statement sent after others in the same write and under the same Sync: their completions and
 * rows are not its results, and an error in one of them is its error.
 */
class QueryAfter extends pg.Query {
  private prefixesLeft: number;

  constructor(
    private readonly prefixes: readonly Statement[],
    config: Statement,
    callback: Callback,
  ) {
    super(config, undefined, callback);
    this.prefixesLeft = prefixes.length;
  }

  // Always the extended protocol, even for a statement without values (a COMMIT).
  requiresPreparation(): boolean {
    return true;
  }

  prepare(connection: Connection): void {
    // Prefixes go unnamed (parsed with each use): pg learns which named statements a connection
    // holds from replies it credits to its own statement only.
    for (const prefix of this.prefixes) {
      connection.parse({ text: prefix.text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: prefix.values, valueMapper: prepareValue });
      connection.execute({ portal: '' });
    }
    (pg.Query.prototype as unknown as { prepare(c: Connection): void }).prepare.call(this, connection);
  }

  handleDataRow(message: unknown): void {
    if (this.prefixesLeft > 0) return;
    (pg.Query.prototype as unknown as { handleDataRow(m: unknown): void }).handleDataRow.call(this, message);
  }

  handleCommandComplete(message: unknown, connection: unknown): void {
    if (this.prefixesLeft > 0) {
      this.prefixesLeft -= 1;
      return;
    }
    (pg.Query.prototype as unknown as { handleCommandComplete(m: unknown, c: unknown): void }).handleCommandComplete.call(this, message, connection);
  }
}

export class PreparingClient extends pg.Client {
  /** kysely asked for BEGIN and nothing has been sent since. */
  private beginPending = false;
  /** Statements marked to ride with the next one, held since the pending BEGIN. */
  private riders: Statement[] = [];

  // One signature for pg's many overloads; kysely calls query(text, values) and awaits the promise.
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const query = super.query as (...a: unknown[]) => never;
    const plain = args.length <= 2 && typeof text === 'string' && (values === undefined || Array.isArray(values));
    if (!plain) return this.sendingHeld(() => query.apply(this, args));
    const parameters = (values ?? []) as unknown[];
    const rides = text.startsWith(RIDES_WITH_NEXT_MARK);
    const config = statementOf(rides ? text.slice(RIDES_WITH_NEXT_MARK.length) : text, parameters);
    if (rides && this.beginPending) {
      this.riders.push({ text: config.text, values: parameters });
      return Promise.resolve(DEFERRED_RIDER) as never;
    }
    if (/^begin$/i.test(text) && parameters.length === 0 && !this.beginPending) {
      this.beginPending = true;
      return Promise.resolve(DEFERRED_BEGIN) as never;
    }
    if (this.beginPending && /^(commit|rollback)$/i.test(text) && (this.riders.length === 0 || /^rollback$/i.test(text))) {
      // Nothing was sent since BEGIN: there is no transaction to end.
      this.beginPending = false;
      this.riders = [];
      return Promise.resolve({ command: text.toUpperCase(), rowCount: null, rows: [], fields: [] }) as never;
    }
    // Only a statement that goes by the extended protocol can carry what is held (a parameterless
    // text may hold several statements, which that protocol refuses); a COMMIT is one statement.
    if (this.beginPending && ('name' in config || parameters.length > 0 || /^commit$/i.test(text))) {
      const prefixes = [BEGIN, ...this.riders];
      this.beginPending = false;
      this.riders = [];
      return new Promise((resolve, reject) => {
        query.call(this, new QueryAfter(prefixes, config, (error, result) => (error ? reject(error) : resolve(result))));
      }) as never;
    }
    return this.sendingHeld(() => query.call(this, config));
  }

  /** Sends a pending BEGIN, and the statements riding with it, on their own before `send`. */
  private sendingHeld(send: () => never): never {
    if (!this.beginPending) return send();
    const riders = this.riders;
    this.beginPending = false;
    this.riders = [];
    const query = super.query as (...a: unknown[]) => Promise<unknown>;
    let sent = query.call(this, 'BEGIN');
    for (const rider of riders) sent = sent.then(() => query.call(this, rider));
    return sent.then(() => send()) as never;
  }
}

function statementOf(text: string, values: unknown[]): Statement {
  return text.startsWith(PREPARED_MARK) ? { name: preparedName(text), text, values } : { text, values };
}
