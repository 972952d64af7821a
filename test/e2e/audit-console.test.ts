/**
 * The audit console (issue 23) in a real browser: Debian's chromium driven by playwright-core over
 * a real port. Every page is also saved as a screenshot under test-output/audit-console/.
 */
import t from 'tap';
import { mkdirSync, readFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { repoRoot } from '../helpers/repo-root.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = pathToFileURL(path.join(repoRoot, 'test-output', 'audit-console') + '/');

if (!existsSync(CHROMIUM)) {
  t.fail(`no chromium at ${CHROMIUM}: .ci/run installs it (apt-get install chromium)`);
} else {
  mkdirSync(SHOTS, { recursive: true });
  t.test('audit console in chromium', async (t) => {
    const s = await startTestServer(t);
    await s.fastify.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(s.fastify.server.address() as AddressInfo).port}`;
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    t.teardown(() => browser.close());
    const story = await writeStory(s);

    const page = await newPage(browser);
    const shot = (name: string, target: Page = page) => target.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });

    await t.test('signing in: a page asks for credentials, a wrong key is refused, the right one opens the log', async (t) => {
      await page.goto(`${base}/audit/`);
      t.match(page.url(), /\/audit\/login$/, 'not signed in: sent to the sign-in page');
      await shot('01-sign-in');
      await page.fill('#email', s.owner.email);
      await page.fill('#secret', 'x'.repeat(32));
      await page.click('button[type=submit]');
      t.match(await page.textContent('[role=alert]'), 'Your username or password is incorrect');
      await page.fill('#email', s.owner.email);
      await page.fill('#secret', s.owner.apiKey);
      await page.click('main button[type=submit]');
      t.match(page.url(), /\/audit\/log$/);
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === 'audit_session');
      t.ok(session, 'a session cookie');
      t.equal(session?.httpOnly, true, 'HttpOnly');
      t.equal(session?.sameSite, 'Strict', 'SameSite=Strict');
      t.ok((await page.locator('table.log tbody tr').count()) > 10, 'the newest events');
      const first = Number(await page.locator('table.log tbody tr td').first().textContent());
      t.equal(first, (await s.platform.store.head()).position, 'newest first');
      await shot('02-log');
    });

    await t.test('filtering the log by event type, then by message, and paging', async (t) => {
      await page.selectOption('#type', 'MessageEdited');
      await page.click('form.filters button[type=submit]');
      const types = await page.locator('table.log tbody tr td[data-label=Type]').allTextContents();
      t.same(types.map((x) => x.trim()), ['MessageEdited', 'MessageEdited'], 'the edit and the move');
      t.match(page.url(), /type=MessageEdited/);
      await shot('03-log-filtered');
      await page.goto(`${base}/audit/log?message=${story.edited}&order=position`);
      const positions = (await page.locator('table.log tbody tr td[data-label=Position]').allTextContents()).map(Number);
      t.same(positions, [...positions].sort((a, b) => a - b), 'by position');
      t.same((await page.locator('table.log tbody tr td[data-label=Type]').allTextContents()).map((x) => x.trim()),
        ['MessageSent', 'MessageEdited', 'MessageEdited', 'ReactionAdded']);
      await page.goto(`${base}/audit/log?order=position`);
      t.equal(await page.locator('table.log tbody tr').count(), 50, 'a page of 50');
      await page.click('a[rel=next]');
      t.equal(Number(await page.locator('table.log tbody tr td').first().textContent()), 51, 'the next page starts after it');
      const chart = await page.request.get(`${base}/audit/chart.svg?type=MessageSent`);
      t.equal(chart.status(), 200);
      const sent = await s.api('GET', '/audit/events', s.owner, { event_types: ['MessageSent'], limit: 1000 });
      t.match(await chart.text(), new RegExp(`<svg[^>]*aria-label="Events per hour: ${sent.body.events.length} events"`), 'the chart counts the filtered set');
    });

    await t.test("a message's life after an edit, a move and a reaction; another's deletion", async (t) => {
      await page.goto(`${base}/audit/log?message=${story.edited}`);
      await page.click(`a[href="/audit/messages/${story.edited}"]`);
      t.match(page.url(), new RegExp(`/audit/messages/${story.edited}$`));
      const steps = await page.locator('ol.timeline > li h2').allTextContents();
      t.same(steps, ['Sent by Alice', 'Content edited', 'Moved', 'Reaction :octopus: added by Bob']);
      const timeline = await page.textContent('ol.timeline');
      t.match(timeline, 'the original text');
      t.match(timeline, 'the edited text');
      t.match(timeline, 'channel audited → elsewhere');
      t.match(timeline, 'topic “plans” → “moved here”');
      t.match(await page.textContent('.status'), 'present');
      await shot('04-message-life');
      await page.goto(`${base}/audit/messages/${story.deleted}`);
      t.same(await page.locator('ol.timeline > li h2').allTextContents(), ['Sent by Alice', 'Deleted']);
      t.match(await page.textContent('.status'), 'deleted');
      await shot('05-message-deleted');
      const missing = await page.goto(`${base}/audit/messages/999999`);
      t.equal(missing?.status(), 404);
    });

    await t.test('content written to look like HTML shows as text and never runs', async (t) => {
      await page.goto(`${base}/audit/log?type=MessageSent`);
      const text = await page.textContent('table.log');
      t.match(text, '<script>window.__pwned = 1</script>');
      t.match(text, '<img src=x onerror="window.__pwned = 2">');
      t.equal(await page.locator('main script, main img[onerror]').count(), 0, 'no element was made from the content');
      t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'nothing ran');
      await page.goto(`${base}/audit/messages/${story.hostile}`);
      t.match(await page.textContent('ol.timeline'), '<script>window.__pwned = 1</script>');
      t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      await shot('06-hostile-content');
    });

    await t.test('verification: run verify, see the head, check a kept head hash', async (t) => {
      await page.goto(`${base}/audit/verify`);
      const head = (await page.textContent('#head-hash'))!.trim();
      t.equal(head, (await s.platform.store.head()).hash);
      t.match(await page.textContent('#last-verified'), 'not since this server started');
      await page.fill('#expected_head', head);
      await page.click('form[action="/audit/verify"] button[type=submit]');
      await page.waitForSelector('#verify-result', { timeout: 30_000 });
      t.match(await page.textContent('#verify-result'), /The chain is intact: \d+ events checked/);
      t.match(await page.textContent('#expected-head'), 'found in the chain');
      t.notMatch(await page.textContent('#expected-head'), 'NOT');
      t.match(await page.textContent('#last-verified'), 'The chain is intact');
      await shot('07-verify');
      await page.goto(`${base}/audit/verify`);
      await page.fill('#expected_head', 'ab'.repeat(32));
      await page.click('form[action="/audit/verify"] button[type=submit]');
      await page.waitForSelector('#verify-result', { timeout: 30_000 });
      t.match(await page.textContent('#expected-head'), 'NOT found in the chain', 'a head this log never had');
      t.match(await page.textContent('#verify-result'), 'not in the chain');
    });

    await t.test('time travel to before the edit shows the old text, with a banner', async (t) => {
      await page.goto(`${base}/audit/time-travel`);
      await page.fill('#at', String(story.beforeEdit));
      await page.click('main button[type=submit]');
      t.match(await page.textContent('.banner'), `as it was at log position ${story.beforeEdit}`);
      t.match(await page.textContent('main'), 'Members then');
      await page.click('section[aria-label="Channels then"] a:text("audited")');
      const messages = await page.textContent('ol.messages');
      t.match(messages, 'the original text');
      t.notMatch(messages, 'the edited text');
      t.notMatch(await page.textContent('section[aria-label="Channels then"]'), 'elsewhere', 'the later channel did not exist yet');
      await shot('08-time-travel');
      // After the move, the message is in the other channel, edited.
      await page.goto(`${base}/audit/time-travel?at=${story.afterMove}&channel=${story.elsewhere}`);
      t.match(await page.textContent('ol.messages'), 'the edited text');
      await page.goto(`${base}/audit/time-travel?at=${story.afterMove}&channel=${story.audited}`);
      t.notMatch(await page.textContent('ol.messages'), 'the edited text', 'moved away');
      const bad = await page.goto(`${base}/audit/time-travel?at=yesterday`);
      t.equal(bad?.status(), 400);
    });

    await t.test('export of the filtered events as JSON lines and CSV', async (t) => {
      await page.goto(`${base}/audit/log?type=MessageEdited`);
      const [jsonl] = await Promise.all([page.waitForEvent('download'), page.click('a:text("JSON lines")')]);
      const lines = readFileSync((await jsonl.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      t.same(lines.map((l) => l.type), ['MessageEdited', 'MessageEdited']);
      t.ok(lines[0].position < lines[1].position, 'in log order');
      const [csv] = await Promise.all([page.waitForEvent('download'), page.click('a:text("CSV")')]);
      const rows = readFileSync((await csv.path())!, 'utf8').trim().split('\n');
      t.match(rows[0], /^position,time,type,actor_id/);
      t.equal(rows.length, 3, 'a header and two events');
      t.match(csv.suggestedFilename(), /^audit-events-.*\.csv$/);
    });

    await t.test('a form without its CSRF token, or posted from another site, is refused', async (t) => {
      const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      for (const body of ['expected_head=', '_csrf=forged&expected_head=']) {
        const r = await fetch(`${base}/audit/verify`, { method: 'POST', redirect: 'manual', headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body });
        t.equal(r.status, 403, body);
        t.match(await r.text(), 'CSRF check failed');
      }
      const logout = await fetch(`${base}/audit/logout`, { method: 'POST', redirect: 'manual', headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
      t.equal(logout.status, 403, 'even signing out needs the token');
      // A page of another site (localhost is not 127.0.0.1) posting a form: the browser sends no SameSite=Strict cookie.
      const site = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html');
        response.end(`<form method="post" action="${base}/audit/verify"><input name="expected_head" value=""><button>go</button></form>`);
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
      const evil = await page.context().newPage();
      await evil.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
      const [answer] = await Promise.all([evil.waitForNavigation(), evil.click('button')]);
      t.equal(answer?.status(), 403, 'refused');
      t.notMatch(evil.url(), /job=/, 'no verification was started');
      await evil.close();
    });

    await t.test('a member gets "not allowed" and nothing of the log', async (t) => {
      const member = await newPage(browser);
      await member.goto(`${base}/audit/login`);
      await member.fill('#email', story.alice.email);
      await member.fill('#secret', story.alice.apiKey);
      const [response] = await Promise.all([member.waitForNavigation(), member.click('main button[type=submit]')]);
      t.equal(response?.status(), 403);
      t.match(await member.textContent('h1'), 'Not allowed');
      const html = await member.content();
      for (const leak of ['MessageSent', 'the original text', 'Position', 'events', 'chart']) t.notMatch(html, leak, `nothing of the log: ${leak}`);
      t.notOk((await member.context().cookies()).some((c) => c.name === 'audit_session'), 'no session');
      await shot('09-not-allowed', member);
      // A member's own session (made as the server would) still gets nothing: the role is checked on every page.
      for (const path of ['/audit/log', '/audit/chart.svg', '/audit/export?format=csv', `/audit/messages/${story.edited}`, '/audit/verify', '/audit/time-travel?at=5']) {
        const r = await fetch(`${base}${path}`, { redirect: 'manual', headers: { cookie: `audit_session=${await memberSession(s, story.alice)}` } });
        t.equal(r.status, 403, path);
        const body = await r.text();
        t.notMatch(body, /MessageSent|the original text|<svg/, `${path} shows nothing`);
      }
      await member.close();
    });

    await t.test('a phone-sized screen, the keyboard, and signing out', async (t) => {
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await phone.context().addCookies(await page.context().cookies());
      await phone.goto(`${base}/audit/log?type=MessageEdited`);
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.ok(overflow <= 1, `no sideways scrolling on a phone (${overflow}px)`);
      await shot('10-log-phone', phone);
      await phone.close();
      // Tab reaches the skip link first, then the navigation.
      await page.goto(`${base}/audit/log`);
      await page.keyboard.press('Tab');
      t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
      await page.keyboard.press('Tab');
      t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Log');
      await page.click('text=Sign out');
      t.match(page.url(), /\/audit\/login$/);
      t.notOk((await page.context().cookies()).some((c) => c.name === 'audit_session'), 'the session cookie is gone');
      await page.goto(`${base}/audit/log`);
      t.match(page.url(), /\/audit\/login$/, 'signed out');
    });
  });
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  return context.newPage();
}

/** What the log must then hold: a message edited, moved and reacted to; one deleted; one with hostile content. */
async function writeStory(s: TestServer) {
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const audited = await createChannel(s, s.owner, 'audited', [alice, bob]);
  const edited = await sendStream(s, alice, audited, 'plans', 'the original text');
  const beforeEdit = (await s.platform.store.head()).position;
  const edit = await s.api('PATCH', `/messages/${edited}`, alice, { content: 'the edited text' });
  if (edit.status !== 200) throw new Error(JSON.stringify(edit.body));
  const elsewhere = await createChannel(s, s.owner, 'elsewhere', [alice, bob]);
  const move = await s.api('PATCH', `/messages/${edited}`, s.owner, { stream_id: elsewhere, topic: 'moved here', propagate_mode: 'change_one' });
  if (move.status !== 200) throw new Error(JSON.stringify(move.body));
  const afterMove = (await s.platform.store.head()).position;
  await s.api('POST', `/messages/${edited}/reactions`, bob, { emoji_name: 'octopus' });
  const deleted = await sendStream(s, alice, audited, 'plans', 'a message to delete');
  const removal = await s.api('DELETE', `/messages/${deleted}`, s.owner);
  if (removal.status !== 200) throw new Error(JSON.stringify(removal.body));
  const hostile = await sendStream(s, alice, audited, 'plans', '<script>window.__pwned = 1</script>');
  await sendStream(s, alice, audited, 'plans', '<img src=x onerror="window.__pwned = 2">');
  for (let i = 0; i < 60; i++) await s.api('POST', '/users/me/status', bob, { status_text: `busy ${i}` });
  return { alice, bob, audited, elsewhere, edited, deleted, hostile, beforeEdit, afterMove };
}

/** A genuine session cookie for a member, as if the sign-in had let them in. */
async function memberSession(s: TestServer, user: TestUser): Promise<string> {
  const { signSession } = await import('../../src/audit-console/session.js');
  return signSession(user.id, user.apiKey, Date.now());
}
