// The pg client every pool connection uses. Three things on top of pg.Client:
// - statements marked by runPrepared run as named (prepared) statements;
// - a transaction's BEGIN is not sent on its own: it rides with the transaction's first statement,
//   in the same write and under the same Sync (the extended protocol lets a client send several
//   statements before one Sync), so a transaction costs one round trip less. A fold pass is one per
//   send, and on a machine where a socket write is dear a round trip is a good part of a send's cost;
// - a statement marked by ridesWithNext, made inside a transaction, is held and rides the same way
//   with the transaction's next statement (after a held BEGIN), the COMMIT included: a fold pass's
//   claim, fold and COMMIT go in one write. It must report failure by raising an error: its caller
//   gets no rows, and an error stops the statements after it under the same Sync and aborts the
//   transaction, so the statement it rides with fails with it. A held statement may be prepared:
//   it is parsed under its name once per connection, as pg does for its own statements.
import { createRequire } from 'node:module';
import pg from 'pg';
import { PREPARED_MARK, RIDES_WITH_NEXT_MARK, preparedName } from './prepared.js';

/** pg's own conversion of a value to its wire form (arrays, dates, buffers), as its statements use. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

type Callback = (error: Error | undefined, result: unknown) => void;
interface Connection {
  /** Named statements the server holds on this connection (pg's own bookkeeping). */
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
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
  /** The statements whose Parse this write sent, in order: their ParseCompletes come back in that order. */
  private readonly parsing: Statement[] = [];

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
    for (const prefix of this.prefixes) {
      const name = prefix.name ?? '';
      if (!name || !isParsed(connection, name)) {
        connection.parse({ text: prefix.text, name, types: [] });
        this.parsing.push(prefix);
      }
      connection.bind({ portal: '', statement: name, values: prefix.values, valueMapper: prepareValue });
      connection.execute({ portal: '' });
    }
    const self = this as unknown as { name?: string; text: string; hasBeenParsed(c: Connection): boolean };
    if (!self.hasBeenParsed(connection)) this.parsing.push({ name: self.name, text: self.text, values: [] });
    (pg.Query.prototype as unknown as { prepare(c: Connection): void }).prepare.call(this, connection);
  }

  /**
   * A Parse of this write succeeded: a named statement now exists on the connection. (An error
   * skips the rest of the write, so the statements not parsed yet are parsed again next time.)
   */
  parseCompleted(connection: Connection): void {
    const statement = this.parsing.shift();
    if (!statement?.name) return;
    connection.parsedStatements[statement.name] = statement.text;
    delete connection.submittedNamedStatements[statement.name];
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

const isParsed = (connection: Connection, name: string) =>
  connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined;

export class PreparingClient extends pg.Client {
  /** kysely asked for BEGIN and nothing has been sent since. */
  private beginPending = false;
  /** Between kysely's BEGIN and its COMMIT or ROLLBACK: statements marked to ride may be held. */
  private inTransaction = false;
  /** Statements marked to ride with the next one, held (after the pending BEGIN, if any). */
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
    if (rides && this.inTransaction) {
      this.riders.push(config);
      return Promise.resolve(DEFERRED_RIDER) as never;
    }
    const bare = parameters.length === 0;
    if (bare && /^begin$/i.test(text) && !this.inTransaction) {
      this.beginPending = true;
      this.inTransaction = true;
      return Promise.resolve(DEFERRED_BEGIN) as never;
    }
    const commit = bare && /^commit$/i.test(text);
    const rollback = bare && /^rollback$/i.test(text);
    if (commit || rollback) {
      this.inTransaction = false;
      // Held statements never ran: rolling back drops them.
      if (rollback) this.riders = [];
      if (this.beginPending && this.riders.length === 0) {
        // Nothing was sent since BEGIN: there is no transaction to end.
        this.beginPending = false;
        return Promise.resolve({ command: text.toUpperCase(), rowCount: null, rows: [], fields: [] }) as never;
      }
    }
    // Only a statement that goes by the extended protocol can carry what is held (a parameterless
    // text may hold several statements, which that protocol refuses); a COMMIT is one statement.
    if ((this.beginPending || this.riders.length > 0) && ('name' in config || !bare || commit)) {
      const prefixes = this.takeHeld();
      return new Promise((resolve, reject) => {
        query.call(this, new QueryAfter(prefixes, config, (error, result) => (error ? reject(error) : resolve(result))));
      }) as never;
    }
    return this.sendingHeld(() => query.call(this, config));
  }

  /** Sends a pending BEGIN, and the statements held to ride, on their own before `send`. */
  private sendingHeld(send: () => never): never {
    if (!this.beginPending && this.riders.length === 0) return send();
    const prefixes = this.takeHeld();
    const query = super.query as (...a: unknown[]) => Promise<unknown>;
    let sent: Promise<unknown> = Promise.resolve();
    for (const prefix of prefixes) sent = sent.then(() => query.call(this, prefix));
    return sent.then(() => send()) as never;
  }

  /** What is held, in the order it must run (a pending BEGIN first); nothing stays held. */
  private takeHeld(): Statement[] {
    const held = this.beginPending ? [BEGIN, ...this.riders] : this.riders;
    this.beginPending = false;
    this.riders = [];
    return held;
  }

  /** pg credits a ParseComplete to its active statement; a write of several says which one it was. */
  _handleParseComplete(): void {
    const active = (this as unknown as { _getActiveQuery(): unknown })._getActiveQuery();
    if (active instanceof QueryAfter) active.parseCompleted((this as unknown as { connection: Connection }).connection);
    else (pg.Client.prototype as unknown as { _handleParseComplete(): void })._handleParseComplete.call(this);
  }
}

function statementOf(text: string, values: unknown[]): Statement {
  return text.startsWith(PREPARED_MARK) ? { name: preparedName(text), text, values } : { text, values };
}
