import t from 'tap';
import { accessPolicyName, retentionChangedNotice, subscribedYouNotice } from '../../../src/domain/channels/notices.js';

const actor = { id: 7, full_name: 'Ann' };

t.test('access policy names', async (t) => {
  t.equal(accessPolicyName({ invite_only: false, history_public_to_subscribers: true, is_web_public: true }), 'Web-public');
  t.equal(accessPolicyName({ invite_only: false, history_public_to_subscribers: true, is_web_public: false }), 'Public');
  t.equal(accessPolicyName({ invite_only: false, history_public_to_subscribers: false, is_web_public: false }), 'Public, protected history');
  t.equal(accessPolicyName({ invite_only: true, history_public_to_subscribers: true, is_web_public: false }), 'Private, shared history');
  t.equal(accessPolicyName({ invite_only: true, history_public_to_subscribers: false, is_web_public: false }), 'Private, protected history');
});

t.test('retention notices: -1 and null both read as forever', async (t) => {
  t.match(retentionChangedNotice(actor, -1, 5), /Old retention period\*\*: Forever\n\* \*\*New retention period\*\*: 5 days\n\nMessages in this channel will now be automatically deleted 5 days after they are sent\.$/);
  t.match(retentionChangedNotice(actor, 5, null), /New retention period\*\*: Forever\n\nMessages in this channel will now be retained forever\.$/);
  t.match(retentionChangedNotice(actor, -1, -1), /will now be retained forever\.$/, 'never "-1 days"');
});

t.test('subscribed-you notices list channels by name', async (t) => {
  t.equal(subscribedYouNotice(actor, ['b']), '@**Ann|7** subscribed you to the channel #**b**.');
  t.equal(subscribedYouNotice(actor, ['b', 'a']), '@**Ann|7** subscribed you to the following channels:\n\n* #**a**\n* #**b**\n');
});
