// Generated `<time:…>` bodies read by python-dateutil itself (the real server's parser) and by us: every one
// must agree. Skipped where python3 with python-dateutil is not installed.
import t from 'tap';
import { generatedDateInputs } from '../../../scripts/dates/generate.js';
import { dateutilAvailable, readingDifferences } from '../../../scripts/dates/oracle.js';

t.test('generated bodies read as dateutil reads them', { skip: dateutilAvailable() ? false : 'python3 with python-dateutil not found' }, async (t) => {
  const bodies = generatedDateInputs(4000, 2026);
  t.equal(bodies.length, 4000);
  t.same(readingDifferences(bodies), []);
});
