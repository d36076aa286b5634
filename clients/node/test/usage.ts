// Type-checked by test/types.test.js when tsc is installed (never run): the
// declarations in index.d.ts accept what the README does and refuse what typingd
// would refuse. Each `@ts-expect-error` line must be an error, or tsc fails.
import {
  Typingd, TypingdClient, TypingdError, TypingdExited, ACTIVITIES, PROTOCOL_VERSION,
  Activity, IndicatorEvent, TypingdEvent, TypingdCommand, CommandMap, EventName, StateEvent,
  AnnounceEvent, Pane,
} from '..';

async function usage(): Promise<number | null> {
  const td = new Typingd({ clock: 'manual', timeoutMs: 3000, phrases: ['de.json'], audience: 'open' });
  const unsubscribe: () => void = td.onIndicator('bob', (ev: IndicatorEvent) => {
    const text: string = ev.text;
    const thread: string | undefined = ev.thread;
    const activities: Activity[] | undefined = ev.activities;
    void text; void thread; void activities;
  });
  unsubscribe();
  const unannounce: () => void = td.onAnnounce('bob', (ev: AnnounceEvent) => {
    const said: string = ev.text;
    const pane: 'side' | undefined = ev.pane;
    void said; void pane;
  });
  unannounce();

  const ok = await td.join('dm', 'alice', { name: 'Alice', sendTyping: true, locale: 'de', receive_typing: true });
  const line: number = ok.line;
  await td.type('dm', 'alice', { activity: 'recording_audio', thread: 'plans', timeoutMs: 45000, at: undefined });
  await td.type('dm', 'alice', { timeout_ms: 500, empty: true });
  await td.openView('dm', 'bob', { view: 'list' });
  await td.openView('dm', 'bob', { thread: 'plans', pane: 'side' });
  const side: Pane = 'side';
  await td.closeView('dm', 'bob', { pane: side });
  await td.type('dm', 'alice', { activity: 'status', status: 'is thinking' });
  await td.tick(100);
  const state: StateEvent = await td.query('dm', { thread: 'plans' });
  const typers: string[] = state.typing;
  const { reply, members, streaks } = await td.snapshot();
  const counted: number = reply.members + members.length + streaks.length;
  const deadline: number | undefined = streaks[0]?.deadline;
  const stats = await td.request('stats');
  const events: number = stats.events;
  await td.request('wave', { anything: 1 });

  // @ts-expect-error: not an activity
  await td.type('dm', 'alice', { activity: 'singing' });
  // @ts-expect-error: pane is 'main' or 'side'
  await td.openView('dm', 'bob', { thread: 'plans', pane: 'top' });
  // @ts-expect-error: status words are a string
  await td.type('dm', 'alice', { activity: 'status', status: 7 });
  // @ts-expect-error: view is 'chat' or 'list'
  await td.openView('dm', 'bob', { view: 'grid' });
  // @ts-expect-error: join takes no timeout_ms
  await td.join('dm', 'carol', { timeoutMs: 5 });
  // @ts-expect-error: tick's at is a number
  await td.tick('soon');
  // @ts-expect-error: clock is real or manual
  void new Typingd({ clock: 'wall' });

  const next: TypingdEvent | null = await td.nextEvent({ timeout: 100, viewer: 'bob' });
  if (next !== null && next.event === 'indicator') {
    const viewer: string = next.viewer; // narrowed by `event`
    void viewer;
  }
  if (next !== null && next.event === 'announce') {
    const said: string = next.text; // narrowed by `event`
    void said;
  }
  if (next !== null && next.event === 'typing') {
    const words: string | undefined = next.status;
    void words;
    const reason: 'timeout' | 'empty' | 'send' | 'leave' | 'removed' | 'offline' | 'closed' | 'hidden' | 'moved' | undefined = next.reason;
    void reason;
  }
  const drained: TypingdEvent[] = td.drainEvents({ viewer: 'bob' });
  const shown: IndicatorEvent | null = td.shown('bob', 'dm', { thread: 'plans' });
  const inSidePane: IndicatorEvent | null = td.shown('bob', 'dm', { thread: 'plans', pane: 'side' });
  td.on('announce', (ev) => { const where: string = ev.conv; void where; });
  const n: number = td.write('type', { conv: 'dm', user: 'alice' });
  await td.outcome(n);
  td.on('indicator', (ev) => { const who: string[] = ev.typing; void who; });
  td.on('exit', (status) => { const s: number | null = status; void s; });

  try {
    await td.stats();
  } catch (err) {
    if (err instanceof TypingdExited) {
      const status: number | null = err.status;
      const stderr: string = err.stderr;
      const code: 'gone' = err.code;
      void status; void stderr; void code;
    } else if (err instanceof TypingdError && err.code === 'not_member') {
      const field: string | undefined = err.field;
      void field;
    }
  }

  const command: TypingdCommand = { cmd: 'type', conv: 'dm', user: 'alice', activity: 'sending_photo' };
  // @ts-expect-error: a join needs conv and user
  const incomplete: CommandMap['join'] = { cmd: 'join', conv: 'dm' };
  const kind: EventName = 'streak';
  const activity: Activity = ACTIVITIES[0];
  const version: 4 = PROTOCOL_VERSION;
  const alias: Typingd = new TypingdClient(['--clock', 'manual']);
  void [line, typers, counted, deadline, events, drained, shown, inSidePane, command, incomplete, kind, activity, version, alias];

  const status: number | null = await td.close({ timeout: 2000, drain: false });
  await td.kill('SIGKILL');
  const exit: number | null = td.exitStatus;
  void exit;
  return status;
}

void usage;
