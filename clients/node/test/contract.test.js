'use strict';
/*
 * The scenarios of ../../API.md (the contract this package shares with the Python
 * client), against the real binary: close() bounded in three steps, drain: false,
 * --format text refused, typingd gone (a bad option, a missing binary, a kill) as
 * TypingdExited, nextEvent and drainEvents by viewer, onIndicator's unsubscribe, the
 * request timeout. In clients/node:
 *
 *     TYPINGD_BINARY=../../.build/release/typingd npm test
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const typingd = require('..');

const { Typingd, TypingdClient, TypingdError, TypingdExited, ACTIVITIES } = typingd;

const PACKAGE = path.join(__dirname, '..');
const MANUAL = ['--clock', 'manual'];

/** A client that is killed after the test in any case. */
function start(t, config = {}) {
  const td = new Typingd(config);
  t.after(async () => {
    if (td.exitStatus === null) await td.kill('SIGKILL');
  });
  return td;
}

/** True while a process with this pid exists (signal 0 checks without sending). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    assert.equal(err.code, 'ESRCH');
    return false;
  }
}

/**
 * What a typingd run with --announce-after-ms writes (protocol v4), as canned lines: an
 * indicator for ben's main screen and one for his side pane, then, once they have
 * settled, an announcement for each screen, and one for cy's chat-list row.
 */
const ANNOUNCING = [
  '{"event":"indicator","at":100,"conv":"g","viewer":"ben","typing":["ana"],"text":"Ana is typing..."}',
  '{"event":"indicator","at":100,"conv":"g","thread":"t","viewer":"ben","pane":"side","typing":["cy"],'
    + '"text":"Cy is typing..."}',
  '{"event":"announce","at":1100,"conv":"g","viewer":"ben","text":"Ana is typing..."}',
  '{"event":"announce","at":1100,"conv":"g","thread":"t","viewer":"ben","pane":"side","text":"Cy is typing..."}',
  '{"event":"announce","at":1100,"conv":"g","viewer":"cy","view":"list","text":"Ana is typing..."}',
];

/**
 * A stand-in for typingd: once it has read a line, it writes `lines`, then reads its
 * input to the end and exits 0. The client parses its output as typingd's.
 */
function cannedBinary(t, lines) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'typingd-canned-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'out.jsonl'), lines.map((line) => `${line}\n`).join(''));
  const script = path.join(dir, 'typingd');
  fs.writeFileSync(script, '#!/bin/sh\nread -r line\ncat "$(dirname "$0")/out.jsonl"\nexec cat >/dev/null\n');
  fs.chmodSync(script, 0o755);
  return script;
}

/** Two members of `g` with names, `a` and `b` (and `c` when asked). */
async function room(td, users = ['a', 'b']) {
  for (const user of users) await td.join('g', user, { name: user.toUpperCase() });
}

test('close({ timeout: 2000 }) with a 45 s streak pending (real clock) returns within 2.5 s: SIGTERM at 1 s', { timeout: 20000 }, async (t) => {
  const td = start(t, { clock: 'real' });
  const texts = [];
  td.onIndicator('b', (ev) => texts.push(ev.text));
  await room(td);
  await td.type('g', 'a', { timeout_ms: 45000 });
  const pid = td.pid;
  const began = Date.now();
  const status = await td.close({ timeout: 2000 });
  const took = Date.now() - began;
  assert.equal(status, 0); // SIGTERM: typingd writes what it has and exits 0
  assert.ok(took < 2500, `close took ${took} ms`);
  assert.ok(took >= 950, `close took ${took} ms: typingd was not given half the timeout to drain`);
  assert.equal(alive(pid), false);
  assert.equal(td.exitStatus, 0);
  assert.deepEqual(texts, ['A is typing...']); // the streak never timed out
  await assert.rejects(td.stats(), (err) => err instanceof TypingdExited && err.status === 0);
});

test('close() sends SIGKILL at nine tenths of the timeout when SIGTERM does not end typingd', { timeout: 20000 }, async (t) => {
  const td = start(t, { clock: 'real' });
  await room(td);
  await td.type('g', 'a', { timeout_ms: 45000 });
  const pid = td.pid;
  process.kill(pid, 'SIGSTOP'); // stopped: SIGTERM stays pending, only SIGKILL ends it
  const began = Date.now();
  const status = await td.close({ timeout: 1000 });
  const took = Date.now() - began;
  assert.equal(status, 128 + 9);
  assert.ok(took >= 850 && took < 1800, `close took ${took} ms`);
  assert.equal(alive(pid), false);
  assert.equal(td.exitStatus, 137);
  assert.equal(td.signalCode, 'SIGKILL');
});

test('close() lets typingd drain by itself when it can: no signal, every event delivered', async (t) => {
  const td = start(t, { options: MANUAL });
  const texts = [];
  td.onIndicator('b', (ev) => texts.push([ev.at, ev.text]));
  await room(td);
  await td.type('g', 'a', { at: 100, timeoutMs: 45000 });
  const closing = td.close({ timeout: 2000 });
  assert.equal(td.close(), closing); // a second close() is the same
  assert.equal(await closing, 0);
  // The manual clock drains at once: the streak's deadline comes without waiting.
  assert.deepEqual(texts, [[100, 'A is typing...'], [45100, '']]);
  assert.equal(td.signalCode, null);
  assert.equal(await td.close(), 0);
});

test('close({ drain: false }) sends SIGTERM at once: no drain, resolved in well under the timeout', { timeout: 20000 }, async (t) => {
  const manual = start(t, { options: MANUAL });
  const texts = [];
  manual.onIndicator('b', (ev) => texts.push([ev.at, ev.text]));
  await room(manual);
  await manual.type('g', 'a', { at: 100 });
  assert.equal(await manual.close({ drain: false }), 0);
  assert.deepEqual(texts, [[100, 'A is typing...']]); // without drain, no [3100, '']

  const real = start(t, { clock: 'real' });
  await room(real);
  await real.type('g', 'a', { timeout_ms: 45000 });
  const pid = real.pid;
  const began = Date.now();
  assert.equal(await real.close({ drain: false }), 0); // timeout 30 s: SIGTERM would wait 15
  const took = Date.now() - began;
  assert.ok(took < 1000, `close took ${took} ms`);
  assert.equal(alive(pid), false);
});

test('--format text is refused at construction with a TypeError, and no typingd is started', (t) => {
  for (const options of [['--format', 'text'], ['--format=text'], ['--format', 'json', '--format', 'text']]) {
    assert.throws(() => start(t, { options }), (err) => {
      assert.ok(err instanceof TypeError);
      assert.match(err.message, /--format text/);
      return true;
    }, JSON.stringify(options));
  }
  // JSON is what the client reads: asking for it is fine.
  const td = start(t, { options: ['--format', 'json', ...MANUAL] });
  return td.stats().then((stats) => assert.equal(stats.event, 'stats')).then(() => td.close());
});

test('a bad option: the first request rejects with TypingdExited, status 64 and stderr naming the option', async (t) => {
  const td = start(t, { options: ['--no-such-option'] });
  await assert.rejects(td.join('g', 'a'), (err) => {
    assert.ok(err instanceof TypingdExited);
    assert.ok(err instanceof TypingdError);
    assert.equal(err.name, 'TypingdExited');
    assert.equal(err.code, 'gone');
    assert.equal(err.status, 64);
    assert.match(err.stderr, /--no-such-option/);
    assert.match(err.message, /status 64/);
    assert.match(err.message, /stderr: .*--no-such-option/);
    return true;
  });
  assert.equal(await td.close(), 64);
  assert.equal(td.exitStatus, 64);
  assert.match(td.stderr, /Unknown option '--no-such-option'/);
  assert.throws(() => td.write('stats'), (err) => err instanceof TypingdExited && err.status === 64);
});

test('a binary that does not exist: TypingdExited with status null', async (t) => {
  const td = start(t, { binary: path.join(os.tmpdir(), 'no-such-dir', 'typingd') });
  await assert.rejects(td.stats(), (err) => {
    assert.ok(err instanceof TypingdExited);
    assert.equal(err.code, 'gone');
    assert.equal(err.status, null);
    assert.equal(err.stderr, '');
    assert.match(err.message, /could not be started .*no-such-dir.*ENOENT/);
    return true;
  });
  assert.equal(await td.close(), null);
  assert.equal(td.exitStatus, null);

  // $TYPINGD_BINARY, relative: taken from the current directory, named in the message.
  const saved = process.env.TYPINGD_BINARY;
  process.env.TYPINGD_BINARY = 'no-such-dir/typingd';
  try {
    const missing = start(t);
    assert.equal(missing.binary, path.resolve('no-such-dir/typingd'));
    await assert.rejects(missing.sync(), { name: 'TypingdExited', status: null });
  } finally {
    process.env.TYPINGD_BINARY = saved;
  }
});

test('a binary that cannot be started is named with the path tried and where it came from', async (t) => {
  const missing = path.join(os.tmpdir(), 'no-such-dir', 'typingd');
  const given = start(t, { binary: missing });
  await assert.rejects(given.stats(), (err) => {
    assert.ok(err instanceof TypingdExited);
    assert.ok(err.message.includes(`(${missing}, from the binary option): no such file (ENOENT)`), err.message);
    assert.match(err.message, /give typingd's path as the binary option or in TYPINGD_BINARY/);
    return true;
  });

  const saved = { binary: process.env.TYPINGD_BINARY, path: process.env.PATH };
  try {
    process.env.TYPINGD_BINARY = 'no-such-dir/typingd';
    const fromEnv = start(t);
    await assert.rejects(fromEnv.sync(), (err) => {
      assert.ok(err.message.includes(`(${path.resolve('no-such-dir/typingd')}, from TYPINGD_BINARY)`), err.message);
      return true;
    });
    delete process.env.TYPINGD_BINARY;
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'typingd-empty-path-'));
    t.after(() => fs.rmSync(empty, { recursive: true, force: true }));
    process.env.PATH = empty;
    const onPath = start(t);
    await assert.rejects(onPath.sync(), (err) => {
      assert.ok(err.message.includes("('typingd' looked up on PATH, neither the binary option nor TYPINGD_BINARY is set)"),
        err.message);
      return true;
    });
  } finally {
    if (saved.binary === undefined) delete process.env.TYPINGD_BINARY;
    else process.env.TYPINGD_BINARY = saved.binary;
    process.env.PATH = saved.path;
  }
});

test('a relative binary is taken from the current directory, whatever spawnOptions.cwd says', async (t) => {
  const given = process.env.TYPINGD_BINARY;
  if (!given || !given.includes('/')) {
    t.diagnostic('TYPINGD_BINARY is not a path: the binary comes from PATH');
  }
  const absolute = given && given.includes('/') ? path.resolve(given) : null;
  const found = absolute || (process.env.PATH || '').split(':').map((dir) => path.join(dir, 'typingd'))
    .find((file) => fs.existsSync(file));
  assert.ok(found, 'no typingd binary');
  const relative = path.relative(process.cwd(), found);
  const binary = relative.includes('/') ? relative : `./${relative}`; // a bare name means PATH
  const td = start(t, { binary, options: MANUAL, spawnOptions: { cwd: os.tmpdir() } });
  assert.equal(td.binary, found);
  assert.equal((await td.join('g', 'a')).event, 'ok');
  assert.equal(await td.close(), 0);
});

test('nextEvent({ viewer }) takes that viewer\'s next event and leaves the others queued', async (t) => {
  const td = start(t, { options: MANUAL });
  await room(td, ['a', 'b', 'c']);
  await td.type('g', 'a', { at: 10 }); // indicators for b, then c
  const forC = await td.nextEvent({ viewer: 'c', timeout: 1000 });
  assert.deepEqual([forC.viewer, forC.at, forC.text], ['c', 10, 'A is typing...']);
  const next = await td.nextEvent({ timeout: 1000 }); // b's was left first in the queue
  assert.deepEqual([next.viewer, next.at], ['b', 10]);

  // Waiting: a's indicator comes later; c's, which comes with it, stays queued.
  const forA = td.nextEvent({ viewer: 'a', timeout: 60000 });
  const nobody = td.nextEvent({ viewer: 'nobody', timeout: 50 });
  await td.type('g', 'b', { at: 20 });
  assert.deepEqual([(await forA).viewer, (await forA).at, (await forA).text], ['a', 20, 'B is typing...']);
  assert.equal(await nobody, null);
  assert.deepEqual(td.drainEvents().map((ev) => [ev.viewer, ev.at]), [['c', 20]]);
  assert.equal(await td.nextEvent({ viewer: 'a', timeout: 20 }), null);
  assert.equal(await td.nextEvent({ viewer: null, timeout: 20 }), null);
  assert.equal(await td.close({ drain: false }), 0);
});

test('drainEvents({ viewer }) takes every queued event of that viewer, in order, and only those', async (t) => {
  const td = start(t, { options: [...MANUAL, '--typing-events'] });
  await room(td, ['a', 'b', 'c']);
  await td.type('g', 'a', { at: 10 });
  await td.type('g', 'b', { at: 20 });
  await td.send('g', 'a', { at: 30 });
  const forC = td.drainEvents({ viewer: 'c' });
  assert.deepEqual(forC.map((ev) => [ev.at, ev.text]),
    [[10, 'A is typing...'], [20, 'A and B are typing...'], [30, 'B is typing...']]);
  assert.deepEqual(td.drainEvents({ viewer: 'c' }), []);
  // The rest, in typingd's order: typing events (no viewer) and a's and b's indicators.
  assert.deepEqual(td.drainEvents().map((ev) => [ev.event, ev.at, ev.viewer ?? ev.user]), [
    ['typing', 10, 'a'], ['indicator', 10, 'b'],
    ['typing', 20, 'b'], ['indicator', 20, 'a'],
    ['typing', 30, 'a'], ['indicator', 30, 'b'],
  ]);
  assert.deepEqual(td.drainEvents(), []);
  assert.equal(await td.close(), 0);
});

test('onIndicator returns a function that removes that callback, and only it', async (t) => {
  const td = start(t, { options: MANUAL });
  await room(td, ['a', 'b', 'c']);
  const first = [];
  const second = [];
  const forC = [];
  const unsubscribeFirst = td.onIndicator('b', (ev) => first.push(ev.at));
  const unsubscribeSecond = td.onIndicator('b', (ev) => second.push(ev.at));
  td.onIndicator('c', (ev) => forC.push(ev.at));
  await td.type('g', 'a', { at: 10 });
  unsubscribeFirst();
  unsubscribeFirst(); // twice: nothing more happens
  await td.type('g', 'a', { at: 20, empty: true });
  unsubscribeSecond();
  await td.type('g', 'a', { at: 30 });
  assert.deepEqual(first, [10]);
  assert.deepEqual(second, [10, 20]);
  assert.deepEqual(forC, [10, 20, 30]);
  // The events are still queued for nextEvent, subscribed or not.
  assert.deepEqual(td.drainEvents({ viewer: 'b' }).map((ev) => ev.at), [10, 20, 30]);
  assert.equal(await td.close(), 0);
});

test('announcements are events of their viewer, apart from indicators, and leave shown() as it was', async (t) => {
  const td = start(t, { binary: cannedBinary(t, ANNOUNCING) });
  const said = [];
  const indicated = [];
  const emitted = [];
  td.onAnnounce('ben', (ev) => said.push(ev));
  td.onIndicator('ben', (ev) => indicated.push(ev));
  td.on('announce', (ev) => emitted.push(ev.viewer));
  td.writeRaw('{}'); // the stand-in answers it with ANNOUNCING
  const first = await td.nextEvent({ viewer: 'cy', timeout: 60000 });
  assert.deepEqual(Object.entries(first), [['event', 'announce'], ['at', 1100], ['conv', 'g'], ['viewer', 'cy'],
    ['view', 'list'], ['text', 'Ana is typing...']]);
  assert.equal(await td.close(), 0); // every line read, every callback called
  assert.deepEqual(td.drainEvents({ viewer: 'ben' }).map((ev) => ev.event), ['indicator', 'indicator', 'announce', 'announce']);
  assert.deepEqual(said.map((ev) => [ev.text, ev.pane]), [['Ana is typing...', undefined], ['Cy is typing...', 'side']]);
  assert.deepEqual(indicated.map((ev) => ev.event), ['indicator', 'indicator']);
  assert.deepEqual(emitted, ['ben', 'ben', 'cy']);
  // What ben's screens show is the indicators', which an announcement does not change.
  assert.equal(td.shown('ben', 'g').at, 100);
  assert.equal(td.shown('ben', 'g', { thread: 't', pane: 'side' }).text, 'Cy is typing...');
  assert.equal(td.shown('ben', 'g', { thread: 't' }), null);
});

test('no reply within requestTimeout rejects with a TypingdError of code timeout', async (t) => {
  const td = start(t, { options: MANUAL, requestTimeout: 200 });
  // This reply comes, however busy the machine: only the query to a stopped typingd
  // is to time out (at requestTimeout).
  await td.request('join', { conv: 'g', user: 'a' }, { timeout: 60000 });
  process.kill(td.pid, 'SIGSTOP');
  const began = Date.now();
  await assert.rejects(td.query('g'), (err) => {
    assert.ok(err instanceof TypingdError);
    assert.ok(!(err instanceof TypingdExited));
    assert.equal(err.code, 'timeout');
    assert.match(err.message, /^timeout: no reply to query \(id js-2, line 2\) within 200 ms$/);
    return true;
  });
  assert.ok(Date.now() - began < 5000); // at requestTimeout, not never (generous for a busy machine)
  assert.equal(await td.kill('SIGKILL'), 137);
});

test('kill(): the exit status, exitStatus and stderr; later requests reject with TypingdExited', async (t) => {
  const td = start(t, { options: MANUAL });
  assert.equal(td.exitStatus, null);
  await td.join('g', 'a');
  assert.equal(await td.kill('SIGKILL'), 137);
  assert.equal(td.exitStatus, 137);
  assert.equal(td.stderr, '');
  assert.equal(await td.exited, 137);
  await assert.rejects(td.join('g', 'b'), (err) => {
    assert.ok(err instanceof TypingdExited);
    assert.equal(err.status, 137);
    assert.match(err.message, /^gone: cannot send join: typingd was ended by SIGKILL \(exit status 137\)$/);
    return true;
  });
  assert.equal(await td.close(), 137); // already gone: close() just tells the status
});

test('the package: require(\'typingd\') gives the API; package.json describes an installable package', () => {
  // The package refers to itself by name (package.json "exports"), as an installed one.
  assert.equal(require('typingd'), typingd);
  for (const name of ['Typingd', 'TypingdClient', 'TypingdError', 'TypingdExited', 'ACTIVITIES', 'LineSplitter']) {
    assert.ok(name in typingd, name);
  }
  assert.equal(TypingdClient, Typingd); // the wrapper's old name
  assert.ok(Object.prototype.isPrototypeOf.call(TypingdError.prototype, TypingdExited.prototype));
  // index.js writes the activities out (the package ships without the schemas): they
  // are the schema's, as index.d.ts's Activity type is.
  const commands = JSON.parse(fs.readFileSync(path.join(PACKAGE, '..', '..', 'schema', 'command.schema.json'), 'utf8'));
  assert.deepEqual(ACTIVITIES, commands.$defs.activity.enum);

  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'typingd');
  assert.equal(pkg.version, '4.0.0');
  assert.equal(pkg.license, 'MIT');
  assert.deepEqual(pkg.engines, { node: '>=18' });
  assert.equal(pkg.scripts.test, 'node --test');
  for (const key of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    assert.equal(pkg[key], undefined, key);
  }
  for (const file of [pkg.main, pkg.types, pkg.exports['.'].default, pkg.exports['.'].types]) {
    assert.ok(fs.existsSync(path.join(PACKAGE, file)), file);
    assert.ok(pkg.files.includes(path.normalize(file)), `${file} is not in "files"`);
  }
});
