'use strict';
/*
 * Tests of the Node wrapper against the real binary. From the repository root:
 *
 *     TYPINGD_BINARY=.build/debug/typingd node --test examples/node/
 *
 * Without TYPINGD_BINARY, `typingd` is looked up on PATH. Every test but the last
 * uses --clock manual, so the events are exact.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { TypingdClient, TypingdError, LineSplitter } = require('./typingd_client');

const MANUAL = ['--clock', 'manual'];

/** A client that the test closes (or kills) in any case. */
function start(t, options = MANUAL, config = {}) {
  const td = new TypingdClient({ options, ...config });
  t.after(async () => {
    if (td.exitStatus === null) await td.kill('SIGKILL');
  });
  return td;
}

function indicator(at, conv, viewer, typing, text) {
  return { event: 'indicator', at, conv, viewer, typing, text };
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
      assert.ok(err instanceof TypingdError);
      assert.equal(err.code, 'gone');
      assert.equal(err.signal, 'SIGKILL');
      assert.match(err.message, /^gone: no reply to (query|stats) \(line [23]\): typingd was ended by SIGKILL$/);
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
