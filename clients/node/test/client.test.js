'use strict';
/*
 * Tests of the client against the real binary: the protocol, the events, the lines
 * without id. In clients/node:
 *
 *     TYPINGD_BINARY=../../.build/release/typingd npm test
 *
 * Without TYPINGD_BINARY, `typingd` is looked up on PATH; a relative one is taken from
 * the current directory. Most tests use --clock manual, so the events are exact.
 * fixtures/de.json is a tiny German phrase table of these tests' own. The scenarios of
 * ../../API.md (close, errors, nextEvent by viewer, ...) are in contract.test.js.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { Typingd, TypingdError, TypingdExited, LineSplitter, ACTIVITIES } = require('..');

const PACKAGE = path.join(__dirname, '..');
const GERMAN = path.join(__dirname, 'fixtures', 'de.json');

const MANUAL = ['--clock', 'manual'];

/** A client that the test closes (or kills) in any case. */
function start(t, options = MANUAL, config = {}) {
  const td = new Typingd({ options, ...config });
  t.after(async () => {
    if (td.exitStatus === null) await td.kill('SIGKILL');
  });
  return td;
}

function indicator(at, conv, viewer, typing, text) {
  return { event: 'indicator', at, conv, viewer, typing, text };
}

// A relative TYPINGD_BINARY means relative to where the tests were started, also for
// the README example, which runs from the package's folder; a bare name is looked up
// on PATH.
if (process.env.TYPINGD_BINARY && process.env.TYPINGD_BINARY.includes('/')) {
  process.env.TYPINGD_BINARY = path.resolve(process.env.TYPINGD_BINARY);
}

test('a one-to-one story: each viewer sees exactly the other one typing', async (t) => {
  const td = start(t);
  const seen = [];
  td.on('indicator', (ev) => seen.push(ev));

  assert.deepEqual(await td.join('dm', 'alice', { name: 'Alice' }), { event: 'ok', line: 1, id: 'js-1' });
  await td.join('dm', 'bob', { name: 'Bob' });
  await td.type('dm', 'alice', { at: 100 });
  await td.type('dm', 'alice', { at: 1100 }); // same streak: nothing new to show
  await td.type('dm', 'bob', { at: 1500 });
  await td.send('dm', 'alice', { at: 2000 });
  await td.type('dm', 'bob', { at: 2500, empty: true });
  await td.type('dm', 'alice', { at: 3000, timeoutMs: 500 });
  assert.deepEqual(await td.tick(4000), { event: 'ok', line: 9, id: 'js-9' });

  assert.deepEqual(seen, [
    indicator(100, 'dm', 'bob', ['alice'], 'Alice is typing...'),
    indicator(1500, 'dm', 'alice', ['bob'], 'Bob is typing...'),
    indicator(2000, 'dm', 'bob', [], ''),
    indicator(2500, 'dm', 'alice', [], ''),
    indicator(3000, 'dm', 'bob', ['alice'], 'Alice is typing...'),
    indicator(3500, 'dm', 'bob', [], ''), // her own timeout_ms of 500
  ]);
  // The same events, in order, for nextEvent() (the Python wrapper's next_event).
  assert.deepEqual(await td.nextEvent({ timeout: 100 }), seen[0]);
  assert.equal(td.drainEvents().length, 5);
  assert.equal(await td.nextEvent({ timeout: 20 }), null);
  assert.equal(await td.close(), 0);
});

test('replies are matched by id: query and stats', async (t) => {
  const td = start(t);
  await td.join('g', 'ann', { name: 'Ann' });
  await td.join('g', 'bob', { name: 'Bob', sendTyping: true });
  await td.type('g', 'ann', { at: 100 });
  // Sent together: each promise gets its own reply.
  const [state, stats, other] = await Promise.all([td.query('g'), td.stats(), td.query('nowhere')]);
  assert.deepEqual(state, {
    event: 'state', at: 100, id: 'js-4', conv: 'g',
    members: ['ann', 'bob'], open: [], typing: ['ann'],
  });
  assert.deepEqual(stats, {
    event: 'stats', at: 100, id: 'js-5', lines: 5, commands: 5, errors: 0,
    conversations: 1, members: 2, typing: 1, events: 5,
  });
  assert.deepEqual(other, {
    event: 'state', at: 100, id: 'js-6', conv: 'nowhere', members: [], open: [], typing: [],
  });
  assert.equal(await td.close(), 0);
});

test('an error reply rejects with its code, field and line', async (t) => {
  const td = start(t);
  await td.join('g', 'ann');
  await assert.rejects(td.type('g', 'mallory'), (err) => {
    assert.ok(err instanceof TypingdError);
    assert.equal(err.code, 'not_member');
    assert.equal(err.field, 'user');
    assert.equal(err.line, 2);
    assert.equal(err.id, 'js-2');
    assert.equal(err.message, 'not_member: user "mallory" is not a member of conversation "g"');
    return true;
  });
  await assert.rejects(td.join('', 'ann'), { code: 'bad_field', field: 'conv', line: 3 });
  await td.tick(50);
  await assert.rejects(td.tick(10), { code: 'time_backwards', line: 5 });
  await assert.rejects(td.type('g', 'ann', { timeoutMs: 0 }), { code: 'bad_field', field: 'timeout_ms' });
  await assert.rejects(td.request('wave'), { code: 'unknown_cmd', line: 7 });
  assert.equal((await td.stats()).errors, 5);
  assert.equal(await td.close(), 0);
});

test('lines without id: a bad line is reported with its line number', async (t) => {
  const td = start(t);
  const lineErrors = [];
  td.on('lineError', (err) => lineErrors.push(err));

  const join = td.write('join', { conv: 'g', user: 'ann' });       // line 1
  const blank = td.writeRaw('   ');                                // line 2: ignored
  const bad = td.writeRaw('{"cmd":"join","conv":"g"');             // line 3
  const twoLines = td.writeRaw('[1,2]\n{"cmd":"stats"} trailing'); // lines 4 and 5
  const missing = td.write('type', { conv: 'g' });                 // line 6
  assert.deepEqual([join, blank, bad, twoLines, missing], [1, 2, 3, 4, 6]);
  assert.equal(td.linesWritten, 6);

  const outcomes = [join, blank, bad, 4, 5, missing].map((line) => td.outcome(line));
  await assert.rejects(outcomes[2], { code: 'bad_json', line: 3 });
  await assert.rejects(outcomes[3], { code: 'not_object', line: 4 });
  await assert.rejects(outcomes[4], { code: 'bad_json', line: 5 });
  await assert.rejects(outcomes[5], { code: 'missing_field', field: 'user', line: 6 });
  // Lines that worked give no output: a later answer (line 6's error) settles them.
  assert.equal(await outcomes[0], null);
  assert.equal(await outcomes[1], null);

  const good = td.write('type', { conv: 'g', user: 'ann', at: 5 }); // line 7
  const pending = td.outcome(good);
  await td.sync(); // a stats with an id, on line 8
  assert.equal(await pending, null);
  // An error that came before the outcome() call is still known.
  await assert.rejects(td.outcome(3), { code: 'bad_json' });

  assert.deepEqual(lineErrors.map((err) => [err.line, err.code]),
    [[3, 'bad_json'], [4, 'not_object'], [5, 'bad_json'], [6, 'missing_field']]);
  assert.equal(await td.close(), 0);
});

test('per-viewer routing delivers each viewer only their own indicators', async (t) => {
  // A big room, so that the output crosses pipe chunk boundaries; names hold
  // multi-byte UTF-8 and the characters typingd escapes (U+2028, U+0085).
  const td = start(t);
  const members = Array.from({ length: 400 }, (_, i) => `user-${i}`);
  const inbox = new Map(members.map((m) => [m, []]));
  const unsubscribe = new Map(members.map((m) => [m, td.onIndicator(m, (ev) => inbox.get(m).push(ev))]));

  await Promise.all(members.map((m, i) =>
    td.join('big', m, { name: i === 0 ? `Zoë 🎉\u2028\u0085 ${'é'.repeat(40)}` : `Member ${i}` })));
  await td.type('big', 'user-0', { at: 10 });
  unsubscribe.get('user-2')(); // user-2 closed their connection
  await td.type('big', 'user-1', { at: 20 });

  // U+0085 is a control character and dropped, U+2028 is kept; 15 graphemes shown.
  const zoe = 'Zoë 🎉\u2028 éééééééé...';
  assert.deepEqual(inbox.get('user-0'), [indicator(20, 'big', 'user-0', ['user-1'], 'Member 1 is typing...')]);
  assert.deepEqual(inbox.get('user-1'), [indicator(10, 'big', 'user-1', ['user-0'], `${zoe} is typing...`)]);
  assert.deepEqual(inbox.get('user-2'), [indicator(10, 'big', 'user-2', ['user-0'], `${zoe} is typing...`)]);
  for (const m of members.slice(3)) {
    assert.deepEqual(inbox.get(m), [
      indicator(10, 'big', m, ['user-0'], `${zoe} is typing...`),
      indicator(20, 'big', m, ['user-0', 'user-1'], `${zoe} and Member 1 are typing...`),
    ]);
  }
  // The typer's user id comes back exactly, escapes and all.
  const odd = 'line\nbreak\u2028🎉';
  await td.join('big', odd);
  await td.type('big', odd, { at: 30 });
  assert.deepEqual(inbox.get('user-0').at(-1).typing, ['user-1', odd]);
  assert.equal(await td.close(), 0);
});

test('protocol v2: open/close views, user rename and send_typing, snapshot', async (t) => {
  const td = start(t, [...MANUAL, '--audience', 'open', '--typing-events']);
  const bob = [];
  const typing = [];
  td.onIndicator('b', (ev) => bob.push([ev.at, ev.text]));
  td.on('typing', (ev) => typing.push([ev.at, ev.user, ev.state, ev.reason]));

  await td.join('g', 'a', { name: 'Alice' });
  await td.join('g', 'b', { name: 'Bob' });
  await td.join('g', 'c', { name: 'Cleo' });
  await td.type('g', 'a', { at: 100 });      // bob's view is closed: nothing for him
  await td.openView('g', 'b', { at: 200 });   // he gets the current indicator at once
  await td.user('a', { name: 'Alicia', at: 300 });
  await td.type('g', 'c', { at: 400 });
  await td.closeView('g', 'b', { at: 500 });
  await td.closeView('g', 'c', { at: 600 }); // stops Cleo's streak: reason closed
  await td.openView('g', 'b', { at: 700 });
  assert.deepEqual(await td.query('g'), {
    event: 'state', at: 700, id: 'js-11', conv: 'g', members: ['a', 'b', 'c'], open: ['b'], typing: ['a'],
  });
  await td.user('a', { sendTyping: false, at: 800 });
  await td.type('g', 'a', { at: 900 }); // succeeds, but starts no streak
  await assert.rejects(td.user('nobody', { name: 'X' }), { code: 'not_member', field: 'user' });

  assert.deepEqual(bob, [
    [200, 'Alice is typing...'],
    [300, 'Alicia is typing...'],
    [400, 'Alicia and Cleo are typing...'],
    [700, 'Alicia is typing...'],
    [800, ''],
  ]);
  assert.deepEqual(typing, [
    [100, 'a', 'started', undefined],
    [400, 'c', 'started', undefined],
    [600, 'c', 'stopped', 'closed'],
    [800, 'a', 'stopped', 'hidden'],
  ]);

  await td.type('g', 'b', { at: 900, timeoutMs: 5000 }); // a streak, listed by the snapshot
  const { reply, members, streaks } = await td.snapshot();
  assert.deepEqual(reply, { event: 'snapshot', at: 900, id: 'js-16', conversations: 1, members: 3, typing: 1 });
  assert.deepEqual(streaks, [{ event: 'streak', at: 900, conv: 'g', user: 'b', deadline: 5900, keystroke: 1 }]);
  assert.deepEqual(members.map((m) => [m.user, m.name, m.send_typing, m.open]), [
    ['a', 'Alicia', false, false], ['b', 'Bob', true, true], ['c', 'Cleo', true, false],
  ]);
  assert.equal(await td.close(), 0);
});

test('close() drains, delivers every event and resolves with status 0', async (t) => {
  const td = start(t);
  const texts = [];
  td.onIndicator('b', (ev) => texts.push([ev.at, ev.text]));
  await td.join('g', 'a', { name: 'A' });
  await td.join('g', 'b', { name: 'B' });
  await td.type('g', 'a', { at: 100 });
  const last = td.write('type', { conv: 'g', user: 'a', at: 200 });
  const lastOutcome = td.outcome(last);
  assert.equal(await td.close(), 0);
  // Draining ends the streak at its deadline before typingd exits.
  assert.deepEqual(texts, [[100, 'A is typing...'], [3200, '']]);
  assert.equal(await lastOutcome, null); // a normal end: the id-less line was applied
  await assert.rejects(td.stats(), { code: 'gone' });
  assert.throws(() => td.write('stats'), { code: 'gone' });
});

test('pending requests are rejected when typingd is killed', async (t) => {
  const td = start(t);
  await td.join('g', 'a');
  // Stopped, typingd cannot answer what follows; then it is killed.
  process.kill(td.pid, 'SIGSTOP');
  const pending = [td.query('g'), td.stats()];
  const line = td.write('join', { conv: 'g', user: 'b' });
  const lineOutcome = td.outcome(line);
  process.kill(td.pid, 'SIGKILL');
  for (const request of pending) {
    await assert.rejects(request, (err) => {
      assert.ok(err instanceof TypingdExited);
      assert.ok(err instanceof TypingdError);
      assert.equal(err.code, 'gone');
      assert.equal(err.signal, 'SIGKILL');
      assert.equal(err.status, 128 + 9);
      assert.match(err.message,
        /^gone: no reply to (query|stats) \(line [23]\): typingd was ended by SIGKILL \(exit status 137\)$/);
      return true;
    });
  }
  await assert.rejects(lineOutcome, { code: 'gone' });
  assert.equal(await td.exited, 128 + 9);
});

test('a typingd that exits early rejects requests with its status and stderr', async (t) => {
  const td = start(t, ['--timeout-ms', '-1']);
  await assert.rejects(td.join('g', 'a'), (err) => {
    assert.equal(err.code, 'gone');
    assert.equal(err.exitCode, 64);
    assert.match(err.message, /typingd exited with status 64; stderr: .*--timeout-ms must be from 1 to 86400000, not -1/);
    return true;
  });
  assert.equal(await td.close(), 64);

  const missing = start(t, [], { binary: '/nonexistent/typingd' });
  await assert.rejects(missing.stats(), { code: 'gone', message: /could not be started.*ENOENT/ });
});

test('the line splitter joins lines and UTF-8 sequences cut across chunks', () => {
  const lines = [];
  const splitter = new LineSplitter((line) => lines.push(line));
  const bytes = Buffer.from('{"text":"Zoë 🎉"}\n{"a":"\u2028"}\r\npartial', 'utf8');
  for (const byte of bytes) splitter.push(Buffer.from([byte])); // one byte at a time
  assert.deepEqual(lines, ['{"text":"Zoë 🎉"}', '{"a":"\u2028"}\r']);
  splitter.end();
  assert.deepEqual(lines.at(-1), 'partial');
});

// Protocol v3 ---------------------------------------------------------------------

/** An indicator event with its keys in typingd's order (v3: thread, view, activities; v4: pane). */
function ind(at, conv, viewer, typing, text, { thread, pane, view, more, activities } = {}) {
  const event = { event: 'indicator', at, conv };
  if (thread !== undefined) event.thread = thread;
  event.viewer = viewer;
  if (pane !== undefined) event.pane = pane;
  if (view !== undefined) event.view = view;
  event.typing = typing;
  if (more !== undefined) event.more = more;
  if (activities !== undefined) event.activities = activities;
  event.text = text;
  return event;
}

function typ(at, conv, user, state, { thread, activity, status, reason } = {}) {
  const event = { event: 'typing', at, conv };
  if (thread !== undefined) event.thread = thread;
  Object.assign(event, { user, state });
  if (activity !== undefined) event.activity = activity;
  if (status !== undefined) event.status = status;
  if (reason !== undefined) event.reason = reason;
  return event;
}

/** Compares events key by key, in order: what the wrapper delivers is what typingd wrote. */
function sameEvents(actual, expected) {
  assert.deepEqual(actual.map(Object.entries), expected.map(Object.entries));
}

test('protocol v3: activities are listed and phrased per activity', async (t) => {
  const td = start(t, [...MANUAL, '--typing-events']);
  for (const [user, name] of [['ana', 'Ana'], ['ben', 'Ben'], ['cy', 'Cy']]) await td.join('g', user, { name });
  await td.type('g', 'ana', { at: 10, activity: 'recording_audio' });
  await td.type('g', 'ben', { at: 20, activity: undefined, thread: undefined }); // left out: typing
  await td.type('g', 'ana', { at: 30, activity: 'sending_photo' });              // same streak
  sameEvents(td.drainEvents(), [
    typ(10, 'g', 'ana', 'started', { activity: 'recording_audio' }),
    ind(10, 'g', 'ben', ['ana'], 'Ana is recording audio...', { activities: ['recording_audio'] }),
    ind(10, 'g', 'cy', ['ana'], 'Ana is recording audio...', { activities: ['recording_audio'] }),
    typ(20, 'g', 'ben', 'started'),
    ind(20, 'g', 'ana', ['ben'], 'Ben is typing...'),
    ind(20, 'g', 'cy', ['ana', 'ben'], 'Ana is recording audio; Ben is typing...',
      { activities: ['recording_audio', 'typing'] }),
    typ(30, 'g', 'ana', 'changed', { activity: 'sending_photo' }),
    ind(30, 'g', 'ben', ['ana'], 'Ana is sending a photo...', { activities: ['sending_photo'] }),
    ind(30, 'g', 'cy', ['ana', 'ben'], 'Ana is sending a photo; Ben is typing...',
      { activities: ['sending_photo', 'typing'] }),
  ]);
  const state = await td.query('g', { at: 35, thread: undefined });
  assert.deepEqual([state.typing, state.activities], [['ana', 'ben'], ['sending_photo', 'typing']]);
  await td.type('g', 'ana', { at: 40 }); // back to typing: no activities key
  sameEvents(td.drainEvents(), [
    typ(40, 'g', 'ana', 'changed', { activity: 'typing' }),
    ind(40, 'g', 'ben', ['ana'], 'Ana is typing...'),
    ind(40, 'g', 'cy', ['ana', 'ben'], 'Ana and Ben are typing...'),
  ]);
  assert.equal('activities' in (await td.query('g')), false);
  for (const activity of ACTIVITIES) {
    const status = activity === 'status' ? 'is busy' : undefined; // the one with words of its own
    assert.equal((await td.type('g', 'cy', { activity, status })).event, 'ok');
  }
  await assert.rejects(td.type('g', 'cy', { activity: 'singing' }), { code: 'bad_field', field: 'activity' });
  assert.equal(await td.close(), 0);
});

test('protocol v3: a German viewer reads the indicator in German (--phrases, locale)', async (t) => {
  const td = start(t, MANUAL, { phrases: GERMAN });
  await td.join('g', 'ana', { name: 'Ana' });
  await td.join('g', 'ben', { name: 'Ben', locale: 'de-AT' }); // de-AT falls back to de
  await td.join('g', 'cy', { name: 'Cy', locale: undefined, receiveTyping: undefined });
  await td.type('g', 'ana', { at: 10 });
  await td.type('g', 'cy', { at: 20, activity: 'recording_video' });
  sameEvents(td.drainEvents(), [
    ind(10, 'g', 'ben', ['ana'], 'Ana tippt …'),
    ind(10, 'g', 'cy', ['ana'], 'Ana is typing...'),
    ind(20, 'g', 'ana', ['cy'], 'Cy is recording video...', { activities: ['recording_video'] }),
    ind(20, 'g', 'ben', ['ana', 'cy'], 'Ana tippt; Cy filmt …', { activities: ['typing', 'recording_video'] }),
  ]);
  await td.user('ben', { locale: 'en', at: 30 });                 // re-rendered at once
  await td.user('ben', { locale: undefined, name: undefined, at: 40 }); // nothing given: no change
  sameEvents(td.drainEvents(), [ind(30, 'g', 'ben', ['ana', 'cy'], 'Ana is typing; Cy is recording video...',
    { activities: ['typing', 'recording_video'] })]);
  await assert.rejects(td.user('ben', { locale: 'de_DE' }), { code: 'bad_field', field: 'locale' });
  assert.equal(await td.close(), 0);

  // defaultLocale: users who give no locale read German; phrases may be an array.
  const de = start(t, MANUAL, { phrases: [GERMAN], defaultLocale: 'de' });
  await de.join('g', 'ana', { name: 'Ana' });
  await de.join('g', 'ben', { locale: 'en' });
  await de.join('g', 'cy');
  await de.type('g', 'ana', { at: 10 });
  sameEvents(de.drainEvents(), [ind(10, 'g', 'ben', ['ana'], 'Ana is typing...'), ind(10, 'g', 'cy', ['ana'], 'Ana tippt …')]);
  assert.equal(await de.close(), 0);
});

test('protocol v3: a thread shows its own typers; shown() tells what each viewer sees', async (t) => {
  const td = start(t, [...MANUAL, '--typing-events']);
  const cy = [];
  td.onIndicator('cy', (ev) => cy.push(ev));
  for (const [user, name] of [['ana', 'Ana'], ['ben', 'Ben'], ['cy', 'Cy'], ['dee', 'Dee']]) {
    await td.join('g', user, { name });
  }
  await td.openView('g', 'cy', { thread: 't', at: 10 }); // cy reads thread t
  await td.type('g', 'ana', { at: 20 });                 // the main timeline
  await td.type('g', 'ben', { thread: 't', at: 30 });
  await td.type('g', 'ana', { thread: 't', at: 40 });    // ana moves to the thread
  sameEvents(td.drainEvents(), [
    typ(20, 'g', 'ana', 'started'),
    ind(20, 'g', 'ben', ['ana'], 'Ana is typing...'),
    ind(20, 'g', 'dee', ['ana'], 'Ana is typing...'),
    typ(30, 'g', 'ben', 'started', { thread: 't' }),
    ind(30, 'g', 'cy', ['ben'], 'Ben is typing...', { thread: 't' }),
    typ(40, 'g', 'ana', 'stopped', { reason: 'moved' }),
    typ(40, 'g', 'ana', 'started', { thread: 't' }),
    ind(40, 'g', 'ben', [], ''),
    ind(40, 'g', 'cy', ['ben', 'ana'], 'Ben and Ana are typing...', { thread: 't' }),
    ind(40, 'g', 'dee', [], ''),
  ]);
  // The per-viewer callback gets the events as received, thread included.
  assert.deepEqual(cy.map((ev) => [ev.at, ev.thread, ev.text]), [[30, 't', 'Ben is typing...'], [40, 't', 'Ben and Ana are typing...']]);
  assert.equal(td.shown('cy', 'g', { thread: 't' }).text, 'Ben and Ana are typing...');
  assert.equal(td.shown('cy', 'g'), null);
  assert.equal(td.shown('dee', 'g'), null);                  // nobody types in the main timeline
  assert.equal(td.shown('dee', 'g', { thread: 't' }), null); // dee has not opened it
  const state = await td.query('g', { thread: 't', at: 50 });
  assert.deepEqual([state.thread, state.typing], ['t', ['ben', 'ana']]);
  assert.deepEqual((await td.query('g')).typing, []);
  await td.send('g', 'ben', { at: 60 });                     // not where ben types: no change
  await td.send('g', 'ben', { thread: 't', at: 70 });
  sameEvents(td.drainEvents(), [typ(70, 'g', 'ben', 'stopped', { thread: 't', reason: 'send' }),
    ind(70, 'g', 'cy', ['ana'], 'Ana is typing...', { thread: 't' })]);
  await td.closeView('g', 'cy', { at: 80 });                 // back to the main timeline, silently
  assert.deepEqual(td.drainEvents(), []);
  assert.equal(td.shown('cy', 'g', { thread: 't' }), null);
  await td.openView('g', 'cy', { thread: 't', at: 90 });     // back: ana still types there
  sameEvents(td.drainEvents(), [ind(90, 'g', 'cy', ['ana'], 'Ana is typing...', { thread: 't' })]);
  assert.deepEqual(td.shown('cy', 'g', { thread: 't' }).typing, ['ana']);
  assert.equal(await td.close(), 0);
});

test('protocol v4 options by name: quietAbove, severalAfter, announceAfterMs', async (t) => {
  const td = start(t, MANUAL, { quietAbove: 3, severalAfter: 1, announceAfterMs: 500 });
  for (const user of ['ana', 'ben', 'cy']) await td.join('g', user, { name: user[0].toUpperCase() + user.slice(1) });
  await td.type('g', 'ana', { at: 10 });
  await td.type('g', 'ben', { at: 20 });
  assert.equal(td.shown('cy', 'g').text, 'Several people are typing...');
  await td.tick(600);
  assert.ok(td.drainEvents().some((e) => e.event === 'announce' && e.viewer === 'cy' && e.text === 'Several people are typing...'));
  await td.join('g', 'dan', { name: 'Dan', at: 700 }); // four members: above quietAbove 3
  assert.equal(td.shown('cy', 'g'), null); // the empty indicator: nothing shown
});

test('protocol v3: a chat-list row is its own screen (view: list, listStyle)', async (t) => {
  const td = start(t, MANUAL, { audience: 'open', listStyle: 'group' });
  for (const [user, name] of [['mom', 'Mom'], ['dad', 'Dad'], ['kid', 'Kid'], ['gran', 'Gran']]) {
    await td.join('fam', user, { name });
  }
  await td.openView('fam', 'kid', { view: 'list', at: 10 });  // the row in kid's chat list
  await td.openView('fam', 'gran', { view: undefined, thread: undefined, at: 20 }); // the chat
  await td.type('fam', 'mom', { at: 100 });
  await td.type('fam', 'dad', { at: 200 });
  await td.type('fam', 'gran', { at: 300 });
  sameEvents(td.drainEvents(), [
    ind(100, 'fam', 'kid', ['mom'], 'Mom is typing...', { view: 'list' }),
    ind(100, 'fam', 'gran', ['mom'], 'Mom is typing...'),
    ind(200, 'fam', 'kid', ['mom', 'dad'], 'Mom and Dad are typing...', { view: 'list' }),
    ind(200, 'fam', 'gran', ['mom', 'dad'], 'Mom and Dad are typing...'),
    // listStyle group (the default, compact, says "Mom and 2 others are typing...")
    ind(300, 'fam', 'kid', ['mom', 'dad', 'gran'], 'Mom, Dad, and Gran are typing...', { view: 'list' }),
  ]);
  assert.deepEqual(td.shown('kid', 'fam', { view: 'list' }).typing, ['mom', 'dad', 'gran']);
  assert.equal(td.shown('kid', 'fam'), null);                 // kid's chat is not on screen
  await td.openView('fam', 'kid', { at: 400 });               // kid opens the chat: a new screen
  sameEvents(td.drainEvents(), [ind(400, 'fam', 'kid', ['mom', 'dad', 'gran'], 'Mom, Dad, and Gran are typing...')]);
  assert.equal(td.shown('kid', 'fam', { view: 'list' }), null);
  assert.equal(td.shown('kid', 'fam', { view: 'chat' }).at, 400);
  await td.closeView('fam', 'kid', { at: 500 });              // --audience open: nothing shown
  assert.equal(td.shown('kid', 'fam'), null);
  await assert.rejects(td.openView('fam', 'kid', { view: 'list', thread: 't' }), { code: 'bad_field', field: 'view' });
  assert.equal(await td.close(), 0);
});

test('protocol v3: receive_typing false sends that viewer nothing', async (t) => {
  const td = start(t, MANUAL);
  const ben = [];
  td.onIndicator('ben', (ev) => ben.push([ev.at, ev.text]));
  await td.join('g', 'ana', { name: 'Ana' });
  await td.join('g', 'ben', { name: 'Ben', receiveTyping: false });
  await td.join('g', 'cy', { name: 'Cy' });
  await td.type('g', 'ana', { at: 10 });
  sameEvents(td.drainEvents(), [ind(10, 'g', 'cy', ['ana'], 'Ana is typing...')]);
  assert.equal(td.shown('ben', 'g'), null);
  await td.user('ben', { receive_typing: true, at: 20 });     // sees current typing at once
  assert.deepEqual(ben, [[20, 'Ana is typing...']]);
  assert.equal(td.shown('ben', 'g').text, 'Ana is typing...');
  await td.user('cy', { receiveTyping: false, at: 30 });      // forgotten without an event
  await td.type('g', 'ben', { at: 40 });
  sameEvents(td.drainEvents(), [ind(20, 'g', 'ben', ['ana'], 'Ana is typing...'), ind(40, 'g', 'ana', ['ben'], 'Ben is typing...')]);
  assert.equal(td.shown('cy', 'g'), null);
  assert.equal(await td.close(), 0);
});

test('protocol v3: snapshot lists members and streaks with their v3 fields', async (t) => {
  const td = start(t, MANUAL);
  await td.join('g', 'ana', { name: 'Ana', locale: 'de-AT' });
  await td.join('g', 'ben', { receiveTyping: false });
  await td.join('g', 'cy', { name: 'Cy' });
  await td.openView('g', 'cy', { thread: 't1', at: 5 });
  await td.openView('g', 'ben', { view: 'list', at: 6 });
  await td.type('g', 'ana', { thread: 't1', activity: 'recording_audio', at: 10 });
  sameEvents(td.drainEvents(), [ind(10, 'g', 'cy', ['ana'], 'Ana is recording audio...',
    { thread: 't1', activities: ['recording_audio'] })]);
  const { reply, members, streaks } = await td.snapshot({ at: 20 });
  assert.deepEqual([reply.members, reply.typing], [3, 1]);
  sameEvents(members, [
    { event: 'member', at: 20, conv: 'g', user: 'ana', name: 'Ana', locale: 'de-AT', send_typing: true, open: false },
    { event: 'member', at: 20, conv: 'g', user: 'ben', send_typing: true, receive_typing: false, open: true, view: 'list' },
    { event: 'member', at: 20, conv: 'g', user: 'cy', name: 'Cy', send_typing: true, open: true, thread: 't1' },
  ]);
  sameEvents(streaks, [{ event: 'streak', at: 20, conv: 'g', thread: 't1', user: 'ana',
    activity: 'recording_audio', deadline: 3010, keystroke: 1 }]);
  await td.offline('cy', { at: 30 });                          // cy's screen changed: forgotten
  const after = await td.snapshot({ at: 40 });
  assert.deepEqual(after.members[2], { event: 'member', at: 40, conv: 'g', user: 'cy', name: 'Cy',
    send_typing: true, open: false, forgotten: true });
  assert.deepEqual(td.drainEvents(), []);                      // none of it leaks to nextEvent()
  assert.equal(await td.close(), 0);
});

// Protocol v4 ---------------------------------------------------------------------

test('protocol v4: a side pane has its own indicators, and shown() its own screen', async (t) => {
  const td = start(t, [...MANUAL, '--typing-events']);
  for (const [user, name] of [['ana', 'Ana'], ['ben', 'Ben'], ['cy', 'Cy']]) await td.join('g', user, { name });
  await td.openView('g', 'ben', { thread: 't', pane: 'side', at: 10 }); // beside ben's main timeline
  await td.type('g', 'ana', { at: 20 });
  await td.type('g', 'cy', { thread: 't', at: 30 });
  sameEvents(td.drainEvents(), [
    typ(20, 'g', 'ana', 'started'),
    ind(20, 'g', 'ben', ['ana'], 'Ana is typing...'),
    ind(20, 'g', 'cy', ['ana'], 'Ana is typing...'),
    typ(30, 'g', 'cy', 'started', { thread: 't' }),
    ind(30, 'g', 'ben', ['cy'], 'Cy is typing...', { thread: 't', pane: 'side' }),
  ]);
  // Two screens of one conversation, each with what it was last sent.
  assert.equal(td.shown('ben', 'g').text, 'Ana is typing...');
  assert.equal(td.shown('ben', 'g', { thread: 't', pane: 'side' }).at, 30);
  assert.equal(td.shown('ben', 'g', { thread: 't' }), null); // not on the main screen
  assert.equal(td.shown('ben', 'g', { pane: 'side' }), null); // the side pane shows t
  await td.openView('g', 'ben', { thread: 't', pane: 'main', at: 40 }); // the main screen moves to t too
  sameEvents(td.drainEvents(), [ind(40, 'g', 'ben', ['cy'], 'Cy is typing...', { thread: 't' })]);
  assert.equal(td.shown('ben', 'g'), null);
  assert.equal(td.shown('ben', 'g', { thread: 't' }).at, 40);
  assert.equal(td.shown('ben', 'g', { thread: 't', pane: 'side' }).at, 30); // left as it was
  await td.closeView('g', 'ben', { pane: 'side', at: 50 }); // removed without an event
  assert.deepEqual(td.drainEvents(), []);
  assert.equal(td.shown('ben', 'g', { thread: 't', pane: 'side' }), null);
  assert.equal(td.shown('ben', 'g', { thread: 't' }).at, 40);
  await td.openView('g', 'ben', { thread: 't', pane: 'side', at: 60 }); // back, compared from empty
  sameEvents(td.drainEvents(), [ind(60, 'g', 'ben', ['cy'], 'Cy is typing...', { thread: 't', pane: 'side' })]);
  const { members } = await td.snapshot({ at: 65 });
  assert.deepEqual([members[1].user, members[1].side], ['ben', 't']);
  await td.offline('ben', { at: 70 }); // both screens go
  assert.equal(td.shown('ben', 'g', { thread: 't', pane: 'side' }), null);
  assert.equal(td.shown('ben', 'g', { thread: 't' }), null);
  for (const options of [{ pane: 'side' }, { pane: 'side', view: 'list' }, { pane: 'top', thread: 't' }]) {
    await assert.rejects(td.openView('g', 'ben', options), { code: 'bad_field', field: 'pane' });
  }
  assert.equal(await td.close(), 0);
});

test('protocol v4: status words are sent, and come back in typing events and streaks', async (t) => {
  const td = start(t, [...MANUAL, '--typing-events']);
  await td.join('g', 'ana', { name: 'Ana' });
  await td.join('g', 'claude', { name: 'Claude' });
  await td.type('g', 'claude', { activity: 'status', status: 'is thinking', timeoutMs: 60000, at: 10 });
  await td.type('g', 'ana', { at: 20 });
  await td.type('g', 'claude', { activity: 'status', status: 'is writing', timeout_ms: 60000, at: 30 });
  sameEvents(td.drainEvents(), [
    typ(10, 'g', 'claude', 'started', { activity: 'status', status: 'is thinking' }),
    ind(10, 'g', 'ana', ['claude'], 'Claude is thinking...', { activities: ['status'] }),
    typ(20, 'g', 'ana', 'started'),
    ind(20, 'g', 'claude', ['ana'], 'Ana is typing...'),
    typ(30, 'g', 'claude', 'changed', { activity: 'status', status: 'is writing' }),
    ind(30, 'g', 'ana', ['claude'], 'Claude is writing...', { activities: ['status'] }),
  ]);
  assert.deepEqual((await td.query('g', { at: 40 })).activities, ['status', 'typing']);
  const { streaks } = await td.snapshot({ at: 50 });
  assert.deepEqual(Object.entries(streaks[0]).slice(4, 6), [['activity', 'status'], ['status', 'is writing']]);
  for (const [options, code] of [[{ activity: 'status' }, 'missing_field'], [{ status: 'is here' }, 'bad_field'],
    [{ activity: 'status', status: 'is\u001b[31m red' }, 'bad_field'], [{ activity: 'status', status: '' }, 'bad_field']]) {
    await assert.rejects(td.type('g', 'ana', options), { code, field: 'status' });
  }
  assert.equal(await td.close(), 0);
});

test('kill() with SIGTERM resolves with 0: typingd writes what it has and exits 0', async (t) => {
  const td = start(t, ['--clock', 'real']);
  const texts = [];
  td.onIndicator('b', (ev) => texts.push(ev.text));
  await td.join('g', 'a', { name: 'A' });
  await td.join('g', 'b', { name: 'B' });
  await td.type('g', 'a');
  assert.equal(await td.kill('SIGTERM'), 0);
  assert.equal(td.signalCode, null);
  assert.deepEqual(texts, ['A is typing...']); // no drain on a signal
});

test('the README example runs as written, as an ES module (Node 20: top-level await)', () => {
  const readme = fs.readFileSync(path.join(PACKAGE, 'README.md'), 'utf8');
  const code = /\n## Example\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)[1];
  // As `node example.mjs` in the package's folder would run it ('typingd' is the
  // package itself there, as in a project that installed it).
  const stdout = execFileSync(process.execPath, ['--input-type=module', '--eval', code],
    { cwd: PACKAGE, encoding: 'utf8', timeout: 60000 });
  // What each line prints is its comment, after "// -> ".
  const expected = code.split('\n').filter((line) => line.includes('// -> '))
    .map((line) => line.split('// -> ')[1].trim());
  assert.ok(expected.length >= 5);
  assert.deepEqual(stdout.trimEnd().split('\n'), expected);
});
