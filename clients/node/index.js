'use strict';
/**
 * typingd for Node.js: runs a typingd process (protocol v4) and speaks its protocol
 * over its pipes. Standard library only, Node 18+. The API is the one of
 * ../API.md, shared with the Python client; README.md beside this file shows it.
 *
 *     const { Typingd } = require('typingd');
 *
 *     async function main() {
 *       const td = new Typingd({ timeoutMs: 3000 });
 *       td.onIndicator('bob', (ev) => console.log('bob sees:', ev.text));
 *       await td.join('dm', 'alice', { name: 'Alice' });
 *       await td.join('dm', 'bob', { name: 'Bob' });
 *       await td.type('dm', 'alice');            // bob sees: Alice is typing...
 *       console.log(await td.query('dm'));       // { event: 'state', members: [...], ... }
 *       console.log(await td.close());           // 0
 *     }
 *     main();
 *
 * Every command method sends its command with an id ("js-1", "js-2", ...) and returns a
 * Promise for the reply that carries it: `ok`, `state`, `stats` or `snapshot` (resolved)
 * or `error` (rejected with a TypingdError holding the event's code, message, line and
 * field). Lines written without an id (`write`, `writeRaw`) are numbered like typingd
 * numbers them, so `outcome(line)` can tell whether a given line failed. When typingd
 * is gone (it could not start, a bad option stopped it, it was killed) every request
 * rejects with a TypingdExited (code 'gone', `.status`, `.stderr`).
 *
 * Every other event (indicator, typing, announce, and errors or replies no request
 * waits for) is emitted ('event', plus 'indicator' / 'typing' / 'announce' / 'member' /
 * 'reply' / 'lineError'), delivered to per-viewer callbacks registered with
 * `onIndicator(viewer, cb)` (and `onAnnounce(viewer, cb)` for announcements), and
 * queued for `nextEvent({ timeout, viewer })` and `drainEvents({ viewer })` (unless
 * `queue: false`). stdout is read all the time, so typingd never blocks on a full pipe
 * however many events it writes.
 *
 * Protocol v3: the command methods pass every field given in their options object
 * and leave out those that are undefined: `activity` and `thread` on `type`, `thread`
 * on `send`, `openView` and `query`, `view` ('chat' or 'list') on `openView`, `locale`
 * and `receive_typing` (or `receiveTyping`) on `join` and `user`. Events are delivered
 * as typingd wrote them (an indicator keeps its `thread`, `view`, `activities` and
 * `more`), and `shown(viewer, conv, { thread, view })` tells what a viewer sees at one
 * location.
 *
 * Protocol v4: `pane` ('main' or 'side') on `openView` and `closeView`, `status` (the
 * words shown) on `type` with `activity: 'status'`. A side pane's indicators carry
 * `pane: 'side'`, and `shown(viewer, conv, { thread, pane: 'side' })` tells what it
 * shows; `typing` events of a status streak carry `status`; `announce` events (typingd's
 * `--announce-after-ms`) are a settled indicator's sentence, for a screen reader.
 *
 * `close({ timeout, drain })` is bounded: typingd drains and exits by itself until half
 * the timeout, then gets SIGTERM, then at nine tenths SIGKILL.
 *
 * The binary is `binary` when given, else $TYPINGD_BINARY, else `typingd` on PATH; a
 * path with a slash is taken relative to the current directory.
 */
const { spawn } = require('node:child_process');
const { EventEmitter } = require('node:events');
const { StringDecoder } = require('node:string_decoder');
const os = require('node:os');
const path = require('node:path');

/** Events that answer a command: they carry the command's id when it had one. */
const REPLIES = new Set(['ok', 'error', 'state', 'stats', 'snapshot']);
/** Where a matched snapshot reply keeps the member events that came before it. */
const MEMBERS = Symbol('members');
/** How much of typingd's stderr is kept (its last 64 KiB) for error messages. */
const STDERR_LIMIT = 64 * 1024;
/** How many recent error events are remembered for late `outcome()` calls. */
const RECENT_ERRORS = 1024;
/**
 * The values of `type`'s `activity`; `typing` is the default, and `status` goes with the
 * field `status`, the words shown after the typer's name.
 */
const ACTIVITIES = Object.freeze(['typing', 'recording_audio', 'recording_video', 'sending_photo',
  'sending_video', 'sending_file', 'sharing_location', 'status']);
/** The events that have per-viewer callbacks: onIndicator, onAnnounce. */
const VIEWER_EVENTS = ['indicator', 'announce'];
/** Command-line options the config may give by name, and their flags. */
const CONFIG_OPTIONS = [
  ['audience', '--audience'], ['order', '--order'], ['maxListed', '--max-listed'],
  ['defaultLocale', '--default-locale'], ['listStyle', '--list-style'],
  ['clock', '--clock'], ['timeoutMs', '--timeout-ms'],
  ['quietAbove', '--quiet-above'], ['severalAfter', '--several-after'], ['announceAfterMs', '--announce-after-ms'],
];

/**
 * typingd answered with an `error` event (`code` is typingd's: `not_member`,
 * `bad_field`, ...), a reply did not come in time (code `timeout`), or the client was
 * closed (code `closed`). `new TypingdError(code, message, event)`, or
 * `new TypingdError(event)` for an `error` event.
 */
class TypingdError extends Error {
  constructor(codeOrEvent, message, event) {
    const fromEvent = typeof codeOrEvent !== 'string';
    if (fromEvent) event = codeOrEvent;
    const code = fromEvent ? event.code : codeOrEvent;
    super(`${code}: ${fromEvent ? event.message : message}`);
    this.name = 'TypingdError';
    this.code = code;
    this.event = event === undefined ? null : event;
    if (event) {
      if (event.line !== undefined) this.line = event.line;
      if (event.id !== undefined) this.id = event.id;
      if (event.field !== undefined) this.field = event.field;
    }
  }
}

/**
 * typingd is not running: it could not be started, it exited (a bad option stops it
 * at once with status 64), or it was ended. Code `gone`; `status` is its exit status
 * (128 + n for signal n), or null when it never started; `stderr` is the last 64 KiB
 * it wrote on stderr. The message says both.
 */
class TypingdExited extends TypingdError {
  constructor(message, { status = null, stderr = '', exitCode = null, signal = null } = {}) {
    super('gone', message);
    this.name = 'TypingdExited';
    this.status = status;
    this.stderr = stderr;
    // How it ended, as child_process tells it: an exit code, or a signal's name.
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

/**
 * Cuts a byte stream into lines at LF. UTF-8 sequences and lines split across chunks
 * are put back together. Only LF ends a line: typingd escapes U+2028, U+2029 and
 * U+0085 in its output, and a CR never ends a line here.
 */
class LineSplitter {
  constructor(onLine) {
    this._onLine = onLine;
    this._decoder = new StringDecoder('utf8');
    this._partial = '';
  }

  push(chunk) {
    const text = this._decoder.write(chunk);
    let end = text.indexOf('\n');
    if (end === -1) {
      // No line ends here: only this chunk is searched, so a long line that comes in
      // many chunks costs its length, not its length times the number of chunks.
      this._partial += text;
      return;
    }
    this._onLine(this._partial + text.slice(0, end));
    let start = end + 1;
    while ((end = text.indexOf('\n', start)) !== -1) {
      this._onLine(text.slice(start, end));
      start = end + 1;
    }
    this._partial = text.slice(start);
  }

  /** The input ended: a last line without LF (a cut-off one, say) is still a line. */
  end() {
    const rest = this._partial + this._decoder.end();
    this._partial = '';
    if (rest !== '') this._onLine(rest);
  }
}

/** Protocol field names for the camelCase spellings a caller may use. */
const ALIASES = { sendTyping: 'send_typing', timeoutMs: 'timeout_ms', receiveTyping: 'receive_typing' };

function fieldsOf(options) {
  const fields = {};
  for (const [key, value] of Object.entries(options || {})) {
    if (value === undefined) continue;
    fields[ALIASES[key] || key] = value;
  }
  return fields;
}

/** What one pane of a viewer shows in one conversation: its thread and its view kind. */
function screenOf(thread, view) {
  return `${view === 'list' ? 'list' : 'chat'}:${thread === undefined || thread === null ? '' : `#${thread}`}`;
}
const MAIN_CHAT = screenOf();

/** A pane as given (undefined, 'main' or 'side'; an indicator's `pane`) -> 'main' or 'side'. */
function paneOf(pane) {
  return pane === 'side' ? 'side' : 'main';
}

/** The key of one pane of one conversation in a viewer's map of what they see. */
function paneKey(conv, pane) {
  return JSON.stringify([paneOf(pane), conv]);
}

/** The last value given for `flag` in a command line (`--flag value` or `--flag=value`). */
function optionValue(args, flag) {
  let value;
  args.forEach((arg, i) => {
    if (arg === flag && i + 1 < args.length) value = args[i + 1];
    else if (typeof arg === 'string' && arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
  });
  return value;
}

function countNewlines(data) {
  if (typeof data === 'string') {
    let n = 0;
    for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) n += 1;
    return n;
  }
  let n = 0;
  for (const byte of data) if (byte === 0x0a) n += 1;
  return n;
}

class Typingd extends EventEmitter {
  /**
   * Starts typingd. A binary that cannot be started, or that exits at once (a bad
   * option), fails the first request with a TypingdExited.
   *
   * @param {object} [config]
   * @param {string[]} [config.options]  command-line options, e.g. ['--clock', 'manual'];
   *   `--format text` is refused (TypeError): this client reads JSON lines
   * @param {string|string[]} [config.phrases]  phrase tables (a JSON file or a folder of
   *   them): one `--phrases` each, in order
   * @param {string} [config.defaultLocale]  `--default-locale`: the table of users with no locale
   * @param {string} [config.listStyle]  `--list-style group|compact`: chat-list rows' phrases
   * @param {string} [config.audience]   `--audience members|open`
   * @param {string} [config.order]      `--order start|recent|name`
   * @param {number} [config.maxListed]  `--max-listed N`
   * @param {string} [config.clock]      `--clock real|manual`
   * @param {number} [config.timeoutMs]  `--timeout-ms N`: the default typing timeout
   * @param {number} [config.quietAbove]  `--quiet-above N`: rooms of more members show no typing
   * @param {number} [config.severalAfter]  `--several-after N`: past N typers, "Several people are typing..."
   * @param {number} [config.announceAfterMs]  `--announce-after-ms N`: `announce` events once a sentence settled
   * @param {string} [config.binary]     default: $TYPINGD_BINARY, else 'typingd' on PATH;
   *   a path with a slash is relative to the current directory
   * @param {number} [config.requestTimeout=5000]  ms to wait for a reply; 0: no limit
   * @param {boolean} [config.queue=true]  keep unmatched events for nextEvent(); a
   *   long-running gateway that uses listeners only should pass false
   * @param {string} [config.idPrefix='js-']
   * @param {object} [config.spawnOptions]  passed to child_process.spawn (cwd, env, ...)
   */
  constructor(config = {}) {
    super();
    if (Array.isArray(config)) config = { options: config };
    let binary = String(config.binary || process.env.TYPINGD_BINARY || 'typingd');
    // A relative path names a file from here, even when spawnOptions.cwd is elsewhere;
    // a bare name is looked up on PATH.
    if (binary.includes('/')) binary = path.resolve(binary);
    this.binary = binary;
    // Where it came from, for the error when it cannot be started.
    this._binaryOrigin = config.binary ? 'from the binary option'
      : process.env.TYPINGD_BINARY ? 'from TYPINGD_BINARY' : 'neither the binary option nor TYPINGD_BINARY is set';
    this.options = [...(config.options || [])].map(String);
    for (const [key, flag] of CONFIG_OPTIONS) {
      if (config[key] !== undefined) this.options.push(flag, String(config[key]));
    }
    if (config.phrases !== undefined) {
      for (const table of [].concat(config.phrases)) this.options.push('--phrases', String(table));
    }
    if (optionValue(this.options, '--format') === 'text') {
      throw new TypeError('--format text is for people at a terminal: this client reads typingd\'s JSON lines');
    }
    // The audience decides what `close` does to what a viewer sees (see shown()).
    this._audienceOpen = optionValue(this.options, '--audience') === 'open';
    this.requestTimeout = config.requestTimeout === undefined ? 5000 : config.requestTimeout;
    this._queueEvents = config.queue !== false;
    this._idPrefix = config.idPrefix === undefined ? 'js-' : config.idPrefix;

    this._nextId = 1;
    this._linesWritten = 0;     // lines written to stdin so far: typingd's line numbers
    this._processedThrough = 0; // every line up to this one is known to be processed
    this._pending = new Map();  // id -> { resolve, reject, cmd, line, timer }
    this._lineWaiters = new Map(); // line -> [{ resolve, reject }]
    this._recentErrors = new Map(); // line -> error event (the last RECENT_ERRORS)
    this._members = [];         // member events waiting for their snapshot event
    this._viewers = new Map();  // event kind ('indicator', 'announce') -> viewer -> Set of callbacks
    for (const kind of VIEWER_EVENTS) this._viewers.set(kind, new Map());
    // viewer -> Map paneKey(conv, pane) -> { conv, pane, event }: the indicator on that screen, if not empty
    this._shown = new Map();
    this._queue = [];
    this._queueWaiters = [];
    this._stderr = '';
    this._stdinEnded = false;
    this._signalled = false;
    this._finished = false;
    this._closing = null;       // the promise of the first close()
    this.exitCode = null;
    this.signalCode = null;
    this._exitStatus = null;

    this._exited = new Promise((resolve) => { this._resolveExited = resolve; });

    this._child = spawn(this.binary, this.options, {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(config.spawnOptions || {}),
    });
    this.pid = this._child.pid;

    const splitter = new LineSplitter((line) => this._onLine(line));
    this._child.stdout.on('data', (chunk) => splitter.push(chunk));
    this._child.stdout.on('end', () => splitter.end());
    const stderrDecoder = new StringDecoder('utf8');
    const keepStderr = (text) => {
      this._stderr += text;
      if (this._stderr.length > STDERR_LIMIT) this._stderr = this._stderr.slice(-STDERR_LIMIT);
    };
    this._child.stderr.on('data', (chunk) => keepStderr(stderrDecoder.write(chunk)));
    this._child.stderr.on('end', () => keepStderr(stderrDecoder.end()));
    // EPIPE and such when typingd is gone: the 'close' handler reports it.
    this._child.stdin.on('error', () => {});
    this._child.on('error', (err) => this._finish(null, null, err));
    this._child.on('close', (code, signal) => this._finish(code, signal, null));
  }

  // Commands -------------------------------------------------------------------

  /**
   * Sends one command with a fresh id; resolves with its reply event (`ok`, `state`,
   * `stats`, `snapshot`), rejects with a TypingdError for an `error` event (or code
   * `timeout` when no reply comes within `timeout` ms, default `requestTimeout`), with
   * a TypingdExited when typingd is gone or exits first.
   */
  request(cmd, fields = {}, { timeout = this.requestTimeout } = {}) {
    const id = `${this._idPrefix}${this._nextId++}`;
    return new Promise((resolve, reject) => {
      const gone = this._goneError(`cannot send ${cmd}`);
      if (gone) return reject(gone);
      const rest = fieldsOf(fields);
      delete rest.id; // the id is always ours
      const line = this._writeLine(JSON.stringify({ cmd, id, ...rest }));
      const slot = { resolve, reject, cmd, line, timer: null, screens: this._screenChange(cmd, rest) };
      if (timeout > 0 && Number.isFinite(timeout)) {
        slot.timer = setTimeout(() => {
          this._pending.delete(id);
          reject(new TypingdError('timeout', `no reply to ${cmd} (id ${id}, line ${line}) within ${timeout} ms`));
        }, timeout);
        slot.timer.unref();
      }
      this._pending.set(id, slot);
    });
  }

  join(conv, user, options = {}) { return this.request('join', { conv, user, ...options }); }
  type(conv, user, options = {}) { return this.request('type', { conv, user, ...options }); }
  send(conv, user, options = {}) { return this.request('send', { conv, user, ...options }); }
  leave(conv, user, options = {}) { return this.request('leave', { conv, user, ...options }); }
  remove(conv, user, options = {}) { return this.request('remove', { conv, user, ...options }); }
  offline(user, options = {}) { return this.request('offline', { user, ...options }); }
  /**
   * The `open` command: the user's view of conv opens, at `thread` (default: the main
   * timeline), as a chat (`view: 'chat'`, the default) or a chat-list row (`view: 'list'`);
   * with `pane: 'side'`, their side pane shows `thread` instead, beside the main screen.
   */
  openView(conv, user, options = {}) { return this.request('open', { conv, user, ...options }); }
  /**
   * The `close` command (close() ends typingd): the user's view of conv closes; with
   * `pane: 'side'`, their side pane is removed instead.
   */
  closeView(conv, user, options = {}) { return this.request('close', { conv, user, ...options }); }
  /** The `user` command: sets name, send_typing, locale and/or receive_typing. */
  user(user, options = {}) { return this.request('user', { user, ...options }); }
  tick(at, options = {}) { return this.request('tick', { at, ...options }); }
  /** The `state` of conv: its typers (and activities) at `thread`, else the main timeline. */
  query(conv, options = {}) { return this.request('query', { conv, ...options }); }
  stats(options = {}) { return this.request('stats', options); }

  /**
   * Resolves with { reply, members, streaks }: the `snapshot` event, and the `member`
   * and `streak` events before it, as typingd wrote them (v3: a member's `locale`,
   * `receive_typing`, `thread`, `view` and `forgotten`; a streak's `thread`, `activity`).
   */
  async snapshot(options = {}) {
    const reply = await this.request('snapshot', options);
    const listed = reply[MEMBERS] || [];
    delete reply[MEMBERS];
    return {
      reply,
      members: listed.filter((e) => e.event === 'member'),
      streaks: listed.filter((e) => e.event === 'streak'),
    };
  }

  /**
   * Resolves once every line written so far has been processed (it sends a `stats`
   * with an id and waits for it; that stats counts as a command). Handy before
   * `outcome()` of a line without id.
   */
  async sync() {
    await this.stats();
  }

  // Lines without id -----------------------------------------------------------

  /** Writes a command without id; returns its line number (see outcome()). */
  write(cmd, fields = {}) {
    const gone = this._goneError(`cannot write ${cmd}`);
    if (gone) throw gone;
    return this._writeLine(JSON.stringify({ cmd, ...fieldsOf(fields) }));
  }

  /**
   * Writes text (or a Buffer) as is, followed by LF, and returns the number of its
   * first line. LFs inside count as line breaks, as typingd counts them.
   */
  writeRaw(data) {
    const gone = this._goneError('cannot write');
    if (gone) throw gone;
    const first = this._linesWritten + 1;
    this._linesWritten += countNewlines(data) + 1;
    this._child.stdin.write(data);
    this._child.stdin.write('\n');
    return first;
  }

  /** The number of lines written so far (typingd's number for the last one). */
  get linesWritten() { return this._linesWritten; }

  /**
   * What became of line `line`: rejects with a TypingdError when typingd reported an
   * error for it; resolves with its reply event (or null for a line without id) once a
   * later answer or a normal exit shows it was processed. An id-less line that
   * succeeds gives no output, so await this together with sync() or close().
   */
  outcome(line) {
    const known = this._recentErrors.get(line);
    if (known) return Promise.reject(new TypingdError(known));
    if (line <= this._processedThrough) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      if (this._finished) {
        return reject(this._goneError(`line ${line} has no known outcome`));
      }
      if (!this._lineWaiters.has(line)) this._lineWaiters.set(line, []);
      this._lineWaiters.get(line).push({ resolve, reject });
    });
  }

  // Events ---------------------------------------------------------------------

  /**
   * Calls `callback(event)` with every `indicator` whose viewer is `viewer` (for a
   * gateway: send it down that person's connection). Returns a function that
   * unsubscribes.
   */
  onIndicator(viewer, callback) {
    return this._listen('indicator', viewer, callback);
  }

  /**
   * Calls `callback(event)` with every `announce` whose viewer is `viewer` (typingd's
   * `--announce-after-ms`: a screen's sentence, said once it has settled, for that
   * person's screen reader), as onIndicator does for indicators. Returns a function that
   * unsubscribes.
   */
  onAnnounce(viewer, callback) {
    return this._listen('announce', viewer, callback);
  }

  _listen(kind, viewer, callback) {
    const viewers = this._viewers.get(kind);
    if (!viewers.has(viewer)) viewers.set(viewer, new Set());
    viewers.get(viewer).add(callback);
    return () => {
      const set = viewers.get(viewer);
      if (!set) return;
      set.delete(callback);
      if (set.size === 0) viewers.delete(viewer);
    };
  }

  /**
   * What `viewer` sees of `conv` at one location: the main timeline or `thread`, as a
   * chat or (`view: 'list'`) as a chat-list row, on their main screen or (`pane: 'side'`)
   * in their side pane. Returns the last `indicator` typingd sent the viewer for that
   * screen, as received (`text`, `typing`, `activities`, ...), or null when it shows
   * nothing: nobody types there, or it is not the viewer's screen (a viewer has one main
   * screen and at most one side pane per conversation). Only non-empty indicators are kept.
   *
   * typingd forgets silently what a viewer was sent when their screen changes (`open`
   * at another thread or view, `close`, `offline`, `leave`, `remove`, `receive_typing`
   * false, each for the pane it is about); this follows it for commands sent with an id
   * (the command methods and request()), when their reply arrives, not for lines sent
   * with write()/writeRaw().
   */
  shown(viewer, conv, { thread, view, pane } = {}) {
    const screens = this._shown.get(viewer);
    const entry = screens === undefined ? undefined : screens.get(paneKey(conv, pane));
    if (entry === undefined || screenOf(entry.event.thread, entry.event.view) !== screenOf(thread, view)) return null;
    return entry.event;
  }

  /**
   * The next event no request waited for (indicator, typing, ...), in typingd's order;
   * with `viewer`, the next one whose viewer that is (the others stay queued). Resolves
   * with null if none comes within `timeout` ms (default: wait until typingd exits).
   */
  nextEvent({ timeout, viewer } = {}) {
    if (viewer === null) viewer = undefined;
    const i = viewer === undefined ? (this._queue.length > 0 ? 0 : -1)
      : this._queue.findIndex((event) => event.viewer === viewer);
    if (i !== -1) return Promise.resolve(this._queue.splice(i, 1)[0]);
    if (this._finished) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter = { resolve, viewer, timer: null };
      if (timeout !== undefined && timeout !== null && timeout !== Infinity) {
        waiter.timer = setTimeout(() => {
          const at = this._queueWaiters.indexOf(waiter);
          if (at !== -1) this._queueWaiters.splice(at, 1);
          resolve(null);
        }, Math.max(0, timeout));
      }
      this._queueWaiters.push(waiter);
    });
  }

  /**
   * Takes every queued event at once, without waiting; with `viewer`, only those whose
   * viewer that is (the others stay queued).
   */
  drainEvents({ viewer } = {}) {
    if (viewer === undefined || viewer === null) {
      const events = this._queue;
      this._queue = [];
      return events;
    }
    const taken = [];
    const kept = [];
    for (const event of this._queue) (event.viewer === viewer ? taken : kept).push(event);
    this._queue = kept;
    return taken;
  }

  /** What typingd wrote on stderr so far (its first 64 KiB). */
  get stderr() { return this._stderr; }

  // Life cycle -----------------------------------------------------------------

  /**
   * Ends typingd's input and resolves with its exit status (128 + n if signal n ended
   * it) once it has exited and all of its stdout was read, so every event has been
   * delivered. Bounded in three steps, whatever is pending: with `drain` (the default)
   * typingd drains (due streaks time out, their events are written) and exits by
   * itself until half of `timeout` (ms) has passed; then it gets SIGTERM (it writes
   * what it has and exits 0) until nine tenths have passed; then SIGKILL. Without
   * `drain`, SIGTERM is sent at once, and the input ends when typingd has exited (so it
   * never starts to drain). `timeout: Infinity` waits for as long as typingd drains.
   * Calling close() again returns the same promise.
   */
  close({ timeout = 30000, drain = true } = {}) {
    if (timeout === null) timeout = Infinity;
    if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) {
      throw new TypeError(`close(): timeout must be a number of ms >= 0, not ${timeout}`);
    }
    if (this._closing) return this._closing;
    const signal = (name) => {
      if (this._finished) return;
      this._signalled = true;
      try {
        this._child.kill(name);
      } catch {
        // Gone in between: its 'close' comes.
      }
    };
    if (!this._stdinEnded) {
      this._stdinEnded = true; // nothing more is written
      if (drain || this._finished) {
        this._child.stdin.end();
      } else {
        // SIGTERM first; the pipe is closed once typingd has exited. Had the input ended
        // first, typingd could read the end of input before the signal and start to
        // drain: under the manual clock a drain takes no time, and did happen.
        signal('SIGTERM');
      }
    }
    if (this._finished) return (this._closing = this._exited);
    const timers = [];
    if (Number.isFinite(timeout)) {
      timers.push(setTimeout(() => signal('SIGTERM'), timeout / 2));
      timers.push(setTimeout(() => signal('SIGKILL'), timeout * 0.9));
    }
    this._closing = this._exited.then((status) => {
      for (const timer of timers) clearTimeout(timer);
      return status;
    });
    return this._closing;
  }

  /**
   * Sends a signal (default SIGTERM); resolves with the exit status once typingd has
   * exited and its output was read. typingd catches SIGTERM, SIGINT, SIGHUP and the
   * other signals that would end it: it writes what it has produced and exits 0, so
   * those resolve with 0. Only a signal it cannot catch (SIGKILL) gives 128 + the
   * signal number. With `timeout` (ms), rejects if typingd has not exited by then.
   */
  kill(signal = 'SIGTERM', { timeout = Infinity } = {}) {
    if (!this._finished) {
      this._signalled = true;
      this._child.kill(signal);
    }
    return this._waitExit(timeout);
  }

  /** Resolves with the exit status once typingd has exited and its output was read. */
  get exited() { return this._exited; }

  /** The exit status once typingd has exited (128 + n for signal n), else null. */
  get exitStatus() { return this._exitStatus; }

  _waitExit(timeout) {
    if (!(timeout > 0 && Number.isFinite(timeout))) return this._exited;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new TypingdError('timeout', `typingd (pid ${this.pid}) has not exited within ${timeout} ms`));
      }, timeout);
      this._exited.then((status) => { clearTimeout(timer); resolve(status); });
    });
  }

  // Internals ------------------------------------------------------------------

  _writeLine(text) {
    this._linesWritten += 1;
    this._child.stdin.write(`${text}\n`);
    return this._linesWritten;
  }

  /**
   * What a command does, once applied, to its user's screens (see shown()): a list of
   * [conv, or undefined for every conversation; user; pane; the screen still shown, or
   * null]. The side pane changes only with `pane: 'side'`, `offline`, `leave`, `remove`
   * and `receive_typing` false.
   */
  _screenChange(cmd, fields) {
    const { user, conv } = fields;
    if (typeof user !== 'string') return null;
    // After `close` a viewer still sees the main timeline under --audience members;
    // under open they see nothing.
    const closed = this._audienceOpen ? null : MAIN_CHAT;
    const side = paneOf(fields.pane) === 'side';
    switch (cmd) {
      case 'open': return side ? [[conv, user, 'side', screenOf(fields.thread)]]
        : [[conv, user, 'main', screenOf(fields.thread, fields.view)]];
      case 'close': return side ? [[conv, user, 'side', null]] : [[conv, user, 'main', closed]];
      case 'offline': return [[undefined, user, 'main', closed], [undefined, user, 'side', null]];
      case 'leave':
      case 'remove': return [[conv, user, 'main', null], [conv, user, 'side', null]];
      case 'join':
      case 'user': return fields.receive_typing === false
        ? [[undefined, user, 'main', null], [undefined, user, 'side', null]] : null;
      default: return null;
    }
  }

  /** An indicator arrived: it is what its viewer now sees on that pane. */
  _show(event) {
    let screens = this._shown.get(event.viewer);
    const key = paneKey(event.conv, event.pane);
    if ((Array.isArray(event.typing) && event.typing.length > 0) || event.more) {
      if (screens === undefined) this._shown.set(event.viewer, (screens = new Map()));
      screens.set(key, { conv: event.conv, pane: paneOf(event.pane), event });
    } else if (screens !== undefined) {
      screens.delete(key);
      if (screens.size === 0) this._shown.delete(event.viewer);
    }
  }

  /** Drops what viewers no longer see after a command. */
  _forget(changes) {
    for (const [conv, user, pane, kept] of changes) {
      const screens = this._shown.get(user);
      if (screens === undefined) continue;
      const keys = conv !== undefined ? [paneKey(conv, pane)]
        : [...screens].filter(([, entry]) => entry.pane === pane).map(([key]) => key);
      for (const key of keys) {
        const entry = screens.get(key);
        if (entry === undefined) continue;
        if (kept === null || screenOf(entry.event.thread, entry.event.view) !== kept) screens.delete(key);
      }
      if (screens.size === 0) this._shown.delete(user);
    }
  }

  /**
   * An error to fail with when nothing more can be written (a TypingdExited once
   * typingd is gone; code `closed` after close() while it still drains), else null.
   */
  _goneError(what) {
    if (this._finished) {
      return new TypingdExited(`${what}: ${this._describeExit()}`, {
        status: this._exitStatus, stderr: this._stderr, exitCode: this.exitCode, signal: this.signalCode,
      });
    }
    if (this._stdinEnded) {
      return new TypingdError('closed', `${what}: the client was closed`);
    }
    return null;
  }

  /** Why typingd could not be started: the path tried, where it came from, and how to give another. */
  _describeSpawnError() {
    const err = this._spawnError;
    const where = this.binary.includes('/') ? this.binary : `'${this.binary}' looked up on PATH`;
    const reasons = { ENOENT: 'no such file', EACCES: 'permission denied' };
    const reason = reasons[err.code] ? `${reasons[err.code]} (${err.code})` : err.message;
    return `typingd could not be started (${where}, ${this._binaryOrigin}): ${reason}; `
      + 'give typingd\'s path as the binary option or in TYPINGD_BINARY';
  }

  /** How typingd ended, with its exit status and its stderr. */
  _describeExit() {
    let text;
    if (this._spawnError) text = this._describeSpawnError();
    else if (this.signalCode) text = `typingd was ended by ${this.signalCode} (exit status ${this._exitStatus})`;
    else text = `typingd exited with status ${this.exitCode}`;
    const stderr = this._stderr.trim();
    return stderr ? `${text}; stderr: ${stderr}` : text;
  }

  _onLine(line) {
    if (line.trim() === '') return;
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      // Not JSON (--format text, or a line cut short by a kill): emitted as 'output'.
      event = null;
    }
    try {
      if (event === null) this.emit('output', line);
      else this._dispatch(event);
    } catch (err) {
      // A listener threw: let it surface, but only after the rest of this chunk was
      // read, so no line is lost and the reader stays in step.
      process.nextTick(() => { throw err; });
    }
  }

  _dispatch(event) {
    const kind = event.event;
    if (kind === 'member' || kind === 'streak') {
      this._members.push(event); // held until its snapshot event tells whose they are
      return;
    }
    if (kind === 'indicator') this._show(event);
    let slot;
    if (REPLIES.has(kind) && typeof event.id === 'string' && this._pending.has(event.id)) {
      slot = this._pending.get(event.id);
      this._pending.delete(event.id);
      if (slot.timer) clearTimeout(slot.timer);
    }
    const line = typeof event.line === 'number' ? event.line : slot ? slot.line : undefined;

    if (kind === 'snapshot') {
      const members = this._members;
      this._members = [];
      if (slot) {
        Object.defineProperty(event, MEMBERS, { value: members, configurable: true });
      } else {
        for (const member of members) this._deliver(member);
      }
    }

    if (slot && slot.screens && kind !== 'error') this._forget(slot.screens);

    if (kind === 'error') {
      if (line !== undefined) {
        this._recentErrors.set(line, event);
        if (this._recentErrors.size > RECENT_ERRORS) {
          this._recentErrors.delete(this._recentErrors.keys().next().value);
        }
      }
      if (slot) slot.reject(new TypingdError(event));
    } else if (slot) {
      slot.resolve(event);
    }
    if (line !== undefined) this._settleLines(line, event);
    if (!slot) this._deliver(event);
  }

  /** Line `line` was answered with `event`: it and every line before it are done. */
  _settleLines(line, event) {
    if (line > this._processedThrough) this._processedThrough = line;
    for (const [n, waiters] of this._lineWaiters) {
      if (n > line) continue;
      this._lineWaiters.delete(n);
      for (const waiter of waiters) {
        if (n === line && event.event === 'error') waiter.reject(new TypingdError(event));
        else waiter.resolve(n === line ? event : null);
      }
    }
  }

  /** An event no request waited for: to listeners, per-viewer callbacks and the queue. */
  _deliver(event) {
    const kind = event.event;
    if (this._queueEvents) {
      // The first waiter that takes this event (any event, or its viewer's), else the queue.
      const i = this._queueWaiters.findIndex((w) => w.viewer === undefined || w.viewer === event.viewer);
      if (i !== -1) {
        const [waiter] = this._queueWaiters.splice(i, 1);
        if (waiter.timer) clearTimeout(waiter.timer);
        waiter.resolve(event);
      } else {
        this._queue.push(event);
      }
    }
    if (VIEWER_EVENTS.includes(kind)) {
      const callbacks = this._viewers.get(kind).get(event.viewer);
      if (callbacks) {
        for (const callback of [...callbacks]) {
          try {
            callback(event);
          } catch (err) {
            process.nextTick(() => { throw err; }); // one viewer's bug spares the others
          }
        }
      }
      this.emit(kind, event);
    } else if (kind === 'typing' || kind === 'member' || kind === 'streak') {
      this.emit(kind, event);
    } else if (kind === 'error') {
      this.emit('lineError', new TypingdError(event));
    } else if (REPLIES.has(kind)) {
      this.emit('reply', event);
    }
    this.emit('event', event);
  }

  _finish(code, signal, spawnError) {
    if (this._finished) return;
    if (spawnError) {
      // 'close' may follow an 'error' from spawn; a later error (a failed kill, say)
      // while the process still runs is not the end.
      if (this._child.pid !== undefined && this._child.exitCode === null && !this._child.killed) return;
      this._spawnError = spawnError;
    }
    this._finished = true;
    if (!this._child.stdin.destroyed) this._child.stdin.destroy(); // close({ drain: false }) left it open
    this.exitCode = code;
    this.signalCode = signal;
    this._exitStatus = signal ? 128 + (os.constants.signals[signal] || 0) : code;

    // Member events with no snapshot event after them (typingd died mid-reply).
    for (const member of this._members.splice(0)) this._deliver(member);

    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const slot of pending) {
      if (slot.timer) clearTimeout(slot.timer);
      slot.reject(this._goneError(`no reply to ${slot.cmd} (line ${slot.line})`));
    }

    // After a normal end of input (we closed stdin, no signal, status 0) typingd has
    // processed every line: those without an error succeeded.
    const complete = this._stdinEnded && !this._signalled && !signal && code === 0;
    for (const [n, waiters] of this._lineWaiters) {
      for (const waiter of waiters) {
        if (complete) waiter.resolve(null);
        else waiter.reject(this._goneError(`line ${n} has no known outcome`));
      }
    }
    this._lineWaiters.clear();

    for (const waiter of this._queueWaiters.splice(0)) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.resolve(null);
    }
    this.emit('exit', this._exitStatus, signal);
    this._resolveExited(this._exitStatus);
  }
}

// `await using td = new Typingd(...)` (where the runtime has explicit resource
// management) closes without drain, like leaving Python's `with` block.
if (typeof Symbol.asyncDispose === 'symbol') {
  Object.defineProperty(Typingd.prototype, Symbol.asyncDispose, {
    value() { return this.close({ drain: false }); },
    writable: true,
    configurable: true,
  });
}

/** The name the wrapper had before the package (examples/node): the same class. */
const TypingdClient = Typingd;

/** The protocol version this client speaks. */
const PROTOCOL_VERSION = 4;

module.exports = {
  Typingd, TypingdClient, TypingdError, TypingdExited, LineSplitter, ACTIVITIES, PROTOCOL_VERSION,
};
