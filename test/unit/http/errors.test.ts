import t from 'tap';
import { toApiError } from '../../../src/http/plugins/errors.js';

// What pg raises: an Error carrying the SQLSTATE in `code`.
const databaseError = (code: string, message: string) => Object.assign(new Error(message), { code });

t.test('database errors a retry may clear are a JSON 503, not a 500', async (t) => {
  for (const [code, message] of [
    ['53300', 'sorry, too many clients already'],
    ['53300', 'too many connections for database "zulip"'],
    ['53200', 'out of memory'],
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
    ['57P01', 'terminating connection due to administrator command'],
  ] as const) {
    const error = toApiError(databaseError(code, message));
    t.equal(error.status, 503, `${code} ${message}`);
    t.equal(error.code, 'SERVICE_UNAVAILABLE');
  }
});

t.test('other database errors stay what they were', async (t) => {
  t.equal(toApiError(databaseError('22P02', 'invalid input syntax for type integer')).status, 400, 'bad input');
  t.equal(toApiError(databaseError('42P01', 'relation "x" does not exist')).status, 500, 'a server bug');
  t.equal(toApiError(databaseError('23505', 'duplicate key value violates unique constraint')).status, 500, 'an unexpected conflict');
});
