import { type Kysely, sql } from 'kysely';

/**
 * Signed heads and a hash that covers recorded_at (issue 24 item 10).
 *
 * - events.hash_version: 1 for every row written before this migration (their link hashes the body
 *   without recorded_at, and keeps verifying so); 2 for rows whose body digest also covers recorded_at,
 *   which the application now chooses (microseconds, so it round-trips exactly) instead of now().
 * - log_signatures: Ed25519 signatures, made by the server with a key the database never holds, of
 *   the ranges of the log it appended itself. The database cannot make one, so a row appended by
 *   anyone else is in no signed range.
 * - append_event / append_events take recorded_at and the hash version and store them. The chain
 *   formula is unchanged: what the version changes is the digest, which the application computes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('hash_version', 'smallint', (c) => c.notNull().defaultTo(1)).execute();

  await db.schema
    .createTable('log_signatures')
    // The last position of the signed range, and the chain hash there.
    .addColumn('position', 'bigint', (c) => c.primaryKey())
    .addColumn('from_position', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    // The log the range was signed in (an import or replay keeps the signatures of its source).
    .addColumn('log_id', 'uuid', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('signed_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await sql`DROP FUNCTION append_event(bigint, int, text, int, uuid, text, int, jsonb, jsonb, text)`.execute(db);
  await sql`DROP FUNCTION append_events(bigint, int[], text[], int[], uuid[], text[], int[], jsonb[], jsonb[], text[])`.execute(db);

  await sql`
    CREATE FUNCTION append_event(
      p_lock bigint, p_request int, p_stream text, p_expected int, p_event_id uuid, p_type text,
      p_schema int, p_data jsonb, p_meta jsonb, p_digest text, p_recorded_at timestamptz, p_hash_version smallint
    ) RETURNS TABLE (request int, ok boolean, out_position bigint, out_version int, out_hash text, actual int)
    LANGUAGE plpgsql AS $$
    DECLARE
      head_position bigint;
      head_hash text;
      v int;
    BEGIN
      PERFORM pg_advisory_xact_lock(p_lock);
      SELECT e.position, e.hash INTO head_position, head_hash FROM events e ORDER BY e.position DESC LIMIT 1;
      SELECT max(e.stream_version) INTO v FROM events e WHERE e.stream_id = p_stream;
      v := coalesce(v, 0);
      request := p_request;
      IF p_expected IS NOT NULL AND v <> p_expected THEN
        ok := false; out_position := NULL; out_version := NULL; out_hash := p_stream; actual := v;
        RETURN NEXT;
        RETURN;
      END IF;
      v := v + 1;
      head_position := coalesce(head_position, 0) + 1;
      head_hash := encode(sha256(convert_to(coalesce(head_hash, repeat('0', 64)) || ':' || head_position || ':' || v || ':' || p_digest, 'UTF8')), 'hex');
      INSERT INTO events (position, event_id, stream_id, stream_version, type, schema_version, data, metadata, hash, recorded_at, hash_version)
      VALUES (head_position, p_event_id, p_stream, v, p_type, p_schema, p_data, p_meta, head_hash, p_recorded_at, p_hash_version);
      ok := true; out_position := head_position; out_version := v; out_hash := head_hash; actual := NULL;
      RETURN NEXT;
    END $$`.execute(db);

  await sql`
    CREATE FUNCTION append_events(
      p_lock bigint, p_request int[], p_stream text[], p_expected int[], p_event_id uuid[], p_type text[],
      p_schema int[], p_data jsonb[], p_meta jsonb[], p_digest text[], p_recorded_at timestamptz, p_hash_version smallint
    ) RETURNS TABLE (request int, ok boolean, out_position bigint, out_version int, out_hash text, actual int)
    LANGUAGE plpgsql AS $$
    DECLARE
      n int := coalesce(array_length(p_request, 1), 0);
      head_position bigint;
      head_hash text;
      versions jsonb;
      positions bigint[] := array_fill(NULL::bigint, ARRAY[n]);
      stream_versions int[] := array_fill(NULL::int, ARRAY[n]);
      hashes text[] := array_fill(NULL::text, ARRAY[n]);
      i int := 1;
      j int;
      last int;
      v int;
      rejected boolean;
      stream text;
    BEGIN
      PERFORM pg_advisory_xact_lock(p_lock);
      SELECT e.position, e.hash INTO head_position, head_hash FROM events e ORDER BY e.position DESC LIMIT 1;
      head_position := coalesce(head_position, 0);
      head_hash := coalesce(head_hash, repeat('0', 64));
      versions := '{}'::jsonb;
      FOREACH stream IN ARRAY p_stream LOOP
        IF NOT versions ? stream THEN
          SELECT max(e.stream_version) INTO v FROM events e WHERE e.stream_id = stream;
          versions := versions || jsonb_build_object(stream, coalesce(v, 0));
        END IF;
      END LOOP;
      WHILE i <= n LOOP
        last := i;
        WHILE last < n AND p_request[last + 1] = p_request[i] LOOP last := last + 1; END LOOP;
        rejected := false;
        FOR j IN i..last LOOP
          IF p_expected[j] IS NOT NULL AND (versions ->> p_stream[j])::int <> p_expected[j] THEN
            request := p_request[i]; ok := false; out_position := NULL; out_version := NULL; out_hash := p_stream[j];
            actual := (versions ->> p_stream[j])::int;
            RETURN NEXT;
            rejected := true;
            EXIT;
          END IF;
        END LOOP;
        IF NOT rejected THEN
          FOR j IN i..last LOOP
            v := (versions ->> p_stream[j])::int + 1;
            versions := jsonb_set(versions, ARRAY[p_stream[j]], to_jsonb(v));
            head_position := head_position + 1;
            head_hash := encode(sha256(convert_to(head_hash || ':' || head_position || ':' || v || ':' || p_digest[j], 'UTF8')), 'hex');
            positions[j] := head_position;
            stream_versions[j] := v;
            hashes[j] := head_hash;
          END LOOP;
        END IF;
        i := last + 1;
      END LOOP;
      RETURN QUERY
        WITH accepted AS (
          SELECT * FROM unnest(positions, p_event_id, p_stream, stream_versions, p_type, p_schema, p_data, p_meta, hashes, p_request)
            AS u(pos, eid, sid, ver, typ, sch, dat, met, hsh, req)
          WHERE u.pos IS NOT NULL
        ), inserted AS (
          INSERT INTO events (position, event_id, stream_id, stream_version, type, schema_version, data, metadata, hash, recorded_at, hash_version)
          SELECT a.pos, a.eid, a.sid, a.ver, a.typ, a.sch, a.dat, a.met, a.hsh, p_recorded_at, p_hash_version FROM accepted a
        )
        SELECT a.req, true, a.pos, a.ver, a.hsh, NULL::int FROM accepted a ORDER BY a.pos;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_event(bigint, int, text, int, uuid, text, int, jsonb, jsonb, text, timestamptz, smallint)`.execute(db);
  await sql`DROP FUNCTION append_events(bigint, int[], text[], int[], uuid[], text[], int[], jsonb[], jsonb[], text[], timestamptz, smallint)`.execute(db);
  await db.schema.dropTable('log_signatures').execute();
  await db.schema.alterTable('events').dropColumn('hash_version').execute();
  await (await import('./0050_set_based_append.js')).up(db);
  await (await import('./0080_single_event_append.js')).up(db);
}
