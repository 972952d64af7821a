import { type Kysely, sql } from 'kysely';

/**
 * append_events, same contract as in 0005, with the writes done set-wise: the current version of
 * every stream in the batch is read by one index probe, the loop only checks versions and continues the
 * hash chain, and all accepted events go into the log in one INSERT. Per-event statements were
 * most of an append's cost in the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION append_events(
      p_lock bigint, p_request int[], p_stream text[], p_expected int[], p_event_id uuid[], p_type text[],
      p_schema int[], p_data jsonb[], p_meta jsonb[], p_digest text[]
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
      -- The current version of each stream in the batch, one index probe per stream.
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
          INSERT INTO events (position, event_id, stream_id, stream_version, type, schema_version, data, metadata, hash)
          SELECT a.pos, a.eid, a.sid, a.ver, a.typ, a.sch, a.dat, a.met, a.hsh FROM accepted a
        )
        SELECT a.req, true, a.pos, a.ver, a.hsh, NULL::int FROM accepted a ORDER BY a.pos;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // 0005's body is restored by running its up() again after dropping this one.
  await sql`DROP FUNCTION append_events`.execute(db);
  const previous = await import('./0005_append_function.js');
  await previous.up(db);
}
