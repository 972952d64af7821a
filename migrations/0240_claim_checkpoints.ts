import { sql, type Kysely } from 'kysely';

/*
 * A fold pass's claim (ProjectionRunner, claimCheckpoints) as one call that raises when it fails,
 * rather than an UPDATE whose returned rows the caller checks: a statement that reports failure by
 * an error can be sent ahead of the pass's next statement, in the same round trip, and stop it (an
 * error in a pipeline skips what follows it and aborts the transaction).
 * It takes the projection lock, makes the transaction's commit not wait for the disk, then moves
 * every named checkpoint from p_from to p_to; SQLSTATE ZC001 unless all of them stood at p_from.
 * The UPDATE runs after the lock is granted, so it reads the checkpoints as the last holder left them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION claim_checkpoints(p_lock bigint, p_names text[], p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE
      moved int;
    BEGIN
      PERFORM pg_advisory_xact_lock(p_lock);
      PERFORM set_config('synchronous_commit', 'off', true);
      UPDATE checkpoints SET position = p_to WHERE name = ANY(p_names) AND position = p_from;
      GET DIAGNOSTICS moved = ROW_COUNT;
      IF moved <> cardinality(p_names) THEN
        RAISE EXCEPTION 'stale checkpoints: not every checkpoint stood at %', p_from USING ERRCODE = 'ZC001';
      END IF;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION claim_checkpoints(bigint, text[], bigint, bigint)`.execute(db);
}
