import { type Kysely, sql } from 'kysely';

/**
 * One round trip per batch: the function takes the append lock, checks each request's expected
 * stream versions, assigns positions and continues the hash chain, all inside the caller's
 * statement. Within PL/pgSQL each statement takes a fresh snapshot, so the head read after the lock
 * is always the latest committed one.
 *
 * hash = sha256(prev_hash || ':' || position || ':' || stream_version || ':' || body_digest), where
 * body_digest (computed by the appender) covers event_id, stream_id, type, schema_version, data and
 * metadata in canonical JSON.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION append_events(
      p_lock bigint, p_request int[], p_stream text[], p_expected int[], p_event_id uuid[], p_type text[],
      p_schema int[], p_data jsonb[], p_meta jsonb[], p_digest text[]
    ) RETURNS TABLE (request int, ok boolean, out_position bigint, out_version int, out_hash text, actual int)
    LANGUAGE plpgsql AS $$
    DECLARE
      head_position bigint;
      head_hash text;
      versions jsonb := '{}'::jsonb;
      n int := coalesce(array_length(p_request, 1), 0);
      i int := 1;
      j int;
      last int;
      v int;
      conflict_version int;
      seen text[];
    BEGIN
      PERFORM pg_advisory_xact_lock(p_lock);
      SELECT e.position, e.hash INTO head_position, head_hash FROM events e ORDER BY e.position DESC LIMIT 1;
      head_position := coalesce(head_position, 0);
      head_hash := coalesce(head_hash, repeat('0', 64));
      WHILE i <= n LOOP
        last := i;
        WHILE last < n AND p_request[last + 1] = p_request[i] LOOP last := last + 1; END LOOP;
        -- Check every stream of the request at its first event, before writing any of them.
        conflict_version := NULL;
        seen := ARRAY[]::text[];
        FOR j IN i..last LOOP
          IF p_stream[j] = ANY(seen) THEN CONTINUE; END IF;
          seen := seen || p_stream[j];
          IF NOT versions ? p_stream[j] THEN
            SELECT coalesce(max(e.stream_version), 0) INTO v FROM events e WHERE e.stream_id = p_stream[j];
            versions := versions || jsonb_build_object(p_stream[j], v);
          END IF;
          IF p_expected[j] IS NOT NULL AND (versions ->> p_stream[j])::int <> p_expected[j] THEN
            conflict_version := (versions ->> p_stream[j])::int;
            request := p_request[i]; ok := false; out_position := NULL; out_version := NULL; out_hash := p_stream[j]; actual := conflict_version;
            RETURN NEXT;
            EXIT;
          END IF;
        END LOOP;
        IF conflict_version IS NULL THEN
          FOR j IN i..last LOOP
            v := (versions ->> p_stream[j])::int + 1;
            versions := versions || jsonb_build_object(p_stream[j], v);
            head_position := head_position + 1;
            head_hash := encode(sha256(convert_to(head_hash || ':' || head_position || ':' || v || ':' || p_digest[j], 'UTF8')), 'hex');
            INSERT INTO events (position, event_id, stream_id, stream_version, type, schema_version, data, metadata, hash)
            VALUES (head_position, p_event_id[j], p_stream[j], v, p_type[j], p_schema[j], p_data[j], p_meta[j], head_hash);
            request := p_request[j]; ok := true; out_position := head_position; out_version := v; out_hash := head_hash; actual := NULL;
            RETURN NEXT;
          END LOOP;
        END IF;
        i := last + 1;
      END LOOP;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_events`.execute(db);
}
