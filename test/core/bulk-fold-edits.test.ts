import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { testMetadata } from '../helpers/platform.js';
import { allProjections } from '../../projections/index.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { ProjectionRunner } from '../../src/projection-runner.js';
import { messageStream } from '../../src/services/messages.js';
import type { Projection } from '../../src/projections-api.js';

const tables = allProjections.flatMap((p) => p.tables);

t.test('runs of edits fold in bulk exactly as one by one', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  await createChannel(s, s.owner, 'general', [alice, bob, carol]);
  const ids: number[] = [];
  for (let i = 0; i < 8; i++) ids.push(await sendStream(s, [alice, bob][i % 2]!, 'general', 'plans', `message ${i} @**Carol**`));
  // Bob and Carol take part in the topic, so a topic wildcard mention flags them.
  await sendStream(s, carol, 'general', 'plans', 'me too');

  // Through the API, one request after another: one run of edits in the log, with a message
  // edited twice in a row, mentions and topic wildcard mentions gained and lost, and a topic move.
  const edit = (as: typeof alice, id: number, params: Record<string, unknown>) => s.api('PATCH', `/messages/${id}`, as, params);
  const requests = [
    () => edit(alice, ids[0]!, { content: 'now for @**Bob**' }),
    () => edit(bob, ids[1]!, { content: 'hello @**topic**' }),
    () => edit(alice, ids[0]!, { content: 'and for nobody' }),
    () => edit(alice, ids[2]!, { content: '@**Bob** and @**Carol**' }),
    () => edit(bob, ids[3]!, { topic: 'moved away', propagate_mode: 'change_one' }),
    () => edit(bob, ids[1]!, { content: 'no wildcard now' }),
    () => edit(alice, ids[4]!, { content: 'edited @**topic**' }),
    () => edit(bob, ids[3]!, { content: 'edited after the move' }),
    () => edit(alice, ids[2]!, { content: '@**Bob** only' }),
  ];
  for (const request of requests) {
    const r = await request();
    t.equal(r.status, 200, JSON.stringify(r.body));
  }

  // Straight into the log: an upload the edits link and unlink, and an edit of a message that is not there.
  const realmId = (await s.platform.db.selectFrom('realms').select('id').executeTakeFirstOrThrow()).id;
  const upload = { attachment_id: 900, realm_id: realmId, owner_id: alice.id, name: 'a.txt', path_id: `${realmId}/ab/xyz/a.txt`, content_type: 'text/plain', size: 3, create_time: Date.now(), upload_space_used: 3 };
  await s.platform.store.append([{ streamId: 'attachment-900', expectedVersion: -1, events: [{ type: 'AttachmentUploaded', data: upload }] }], testMetadata(alice.id));
  const rawEdit = (id: number, content: string, paths: string[] | null, mentioned: number[] = []) => ({
    message_id: id, message_ids: [id], realm_id: realmId, user_id: alice.id, edit_timestamp: 1_700_000_000 + id, stream_id: null, orig_topic: 'plans',
    content, rendered_content: `<p>${content}</p>`, prev_content: 'before', prev_rendered_content: '<p>before</p>', is_me_message: false, has_link: false,
    has_image: false, has_attachment: paths !== null && paths.length > 0, mentioned_user_ids: mentioned, prev_mentioned_user_ids: [], stream_wildcard: false,
    topic_wildcard: false, topic_wildcard_user_ids: [], attachment_paths: paths, new_topic: null, new_stream_id: null, propagate_mode: 'change_one', dm_user_ids: [],
  });
  const file = `/user_uploads/${upload.path_id}`;
  const raw = [
    rawEdit(ids[5]!, 'see the file', [file]),
    rawEdit(ids[6]!, 'no file here', []),
    rawEdit(ids[5]!, 'the file is gone', []),
    rawEdit(ids[6]!, 'now the file', [file]),
    rawEdit(ids[7]!, 'and here', [file], [carol.id]),
    rawEdit(ids[7]!, 'history only', null),
    rawEdit(999_999, 'nobody sent this', [], [carol.id]), // no row to edit, so no mention flag either
    rawEdit(ids[6]!, 'the file stays', [file, '/not/an/upload']),
  ];
  for (const data of raw) {
    await s.platform.store.append([{ streamId: messageStream(data.message_id), expectedVersion: undefined, events: [{ type: 'MessageEdited', data }] }], testMetadata(alice.id));
  }
  const head = (await s.platform.store.head()).position;
  t.ok(await s.platform.waitForProjections(head, 30_000), 'the live fold reaches the head');
  const live = await tableChecksums(s.platform.db, tables);
  const links = await s.platform.db.selectFrom('attachment_messages').select('message_id').orderBy('message_id').execute();
  t.same(links.map((l) => l.message_id), [ids[6], ids[7]], 'the upload is linked from the messages whose last edit names it');
  const mentions = await s.platform.db.selectFrom('message_flags').select('message_id').where('user_id', '=', carol.id).where('message_id', 'in', [ids[7]!, 999_999]).execute();
  t.same(mentions.map((m) => m.message_id), [ids[7]], 'an edit of a message that is not there flags nobody');

  const { db, store, bus } = s.platform;
  const runs: number[] = [];
  const counted: Projection[] = allProjections.map((p) => ({
    ...p,
    applyRun: p.applyRun && (async (trx, events) => {
      if (p.name === 'messages' && events[0]!.type === 'MessageEdited') runs.push(events.length);
      return p.applyRun!(trx, events);
    }),
  }));
  const eventByEvent: Projection[] = allProjections.map((p) => ({ ...p, bulkTypes: new Set<string>(), applyRun: undefined }));

  t.equal(await new ProjectionRunner(db, store, eventByEvent, bus).rebuild(), head, 'event by event: the whole log');
  t.same(await tableChecksums(db, tables), live, 'event by event gives the live tables');
  t.equal(await new ProjectionRunner(db, store, counted, bus).rebuild(), head, 'in runs: the whole log');
  t.ok(runs.some((n) => n >= requests.length), `edits folded in runs of ${runs.join(', ')} events`);
  t.same(await tableChecksums(db, tables), live, 'in runs gives the same tables');

  const read = await s.api('GET', '/messages', carol, { anchor: 'oldest', num_before: 0, num_after: 20 });
  const byId = new Map(read.body.messages.map((m: { id: number; flags: string[]; content: string }) => [m.id, m]));
  t.match(byId.get(ids[2]), { content: '<p><span class="user-mention" data-user-id="' + bob.id + '">@Bob</span> only</p>' }, 'the last edit of a message edited twice wins');
  t.notOk((byId.get(ids[2]) as { flags: string[] }).flags.includes('mentioned'), 'Carol is no longer mentioned where the last edit dropped her');
});
