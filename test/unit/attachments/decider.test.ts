import t from 'tap';
import { decideAttachment, sanitizeFileName, type AttachmentState } from '../../../src/domain/attachments/decider.js';

const day = 24 * 3600 * 1000;
const state: AttachmentState = { attachment_id: 3, realm_id: 1, owner_id: 7, path_id: '1/ab/x/f.txt', size: 10, linked_message_count: 0, orphaned: false, create_time: 0 };
const expire = (s: AttachmentState, now: number) => decideAttachment({ type: 'ExpireAttachment', now_ms: now, unused_retention_ms: 21 * day, realm_space_used: 50 }, s);

t.test('expiry', async (t) => {
  t.same(expire(state, 20 * day), [], 'unused but young');
  t.match(expire(state, 21 * day), [{ type: 'AttachmentDeleted', data: { reason: 'unused', upload_space_used: 40 } }]);
  t.same(expire({ ...state, linked_message_count: 1 }, 100 * day), [], 'linked files stay');
  t.match(expire({ ...state, orphaned: true }, 1), [{ data: { reason: 'unlinked' } }], 'orphans go at once');
  t.same(expire({ ...state, orphaned: true, linked_message_count: 2 }, 1), []);
});

t.test('owner-only deletion and size limit', async (t) => {
  t.throws(() => decideAttachment({ type: 'DeleteAttachment', actor_id: 8, realm_space_used: 10 }, state), { message: 'Invalid attachment' });
  t.throws(() => decideAttachment({ type: 'DeleteAttachment', actor_id: 7, realm_space_used: 10 }, null), { message: 'Invalid attachment' });
  t.throws(() => decideAttachment({
    type: 'UploadAttachment', attachment_id: 1, realm_id: 1, owner_id: 7, file_name: 'a', random_dir: 'ab/x', content_type: 'text/plain',
    size: 2 * 1024 * 1024 + 1, max_size_mib: 2, now_ms: 0, realm_space_used: 0,
  }, null), { message: 'Uploaded file is larger than the allowed limit of 2 MiB' });
});

t.test('file names', async (t) => {
  t.equal(sanitizeFileName('../../etc/passwd'), 'passwd');
  t.equal(sanitizeFileName('my report (final).pdf'), 'my-report-final.pdf');
  t.equal(sanitizeFileName('...'), 'uploaded-file');
  t.equal(sanitizeFileName('résumé.txt'), 'résumé.txt');
});
