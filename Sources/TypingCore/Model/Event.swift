/// Everything typingd writes, one event per line, as a value: the engine produces
/// events and an ``EventSink`` takes them (the daemon's encodes them on the fly).
public enum Event: Sendable, Equatable {
    /// What a viewer sees changed.
    case indicator(Indicator)
    /// A screen's sentence, once it has stayed the same for `--announce-after-ms`
    /// (Protocol.md#announcements-for-screen-readers).
    case announce(Announce)
    /// A streak started or stopped (only with `--typing-events`).
    case typing(Typing)
    /// A command with an id was applied.
    case ok(OK)
    /// A line was not applied.
    indirect case error(Error)
    /// The reply to `query`.
    indirect case state(State)
    /// The reply to `stats`.
    indirect case stats(Stats)
    /// One membership, in the reply to `snapshot`.
    indirect case member(Member)
    /// One live streak, in the reply to `snapshot`.
    indirect case streak(Streak)
    /// The end of the reply to `snapshot`.
    indirect case snapshot(Snapshot)
}

/// Where the engine puts the events it produces, in order.
public protocol EventSink: ~Copyable {
    /// Receives the next event.
    mutating func emit(_ event: Event)
}

/// Where the engine's own code writes events: the user's sink, reached through one
/// function call per event. The engine's public entry points are inlined into their
/// callers, which point one at their sink; the rest of the engine is compiled for
/// this one type, so it is specialized whatever sink its users have (without it, a
/// sink of another module would be reached through generic code on every event).
/// Its function captures nothing once specialized, so making one allocates nothing.
@usableFromInline
struct EventTarget: EventSink {
    @usableFromInline let sink: UnsafeMutableRawPointer
    @usableFromInline let deliver: (UnsafeMutableRawPointer, Event) -> Void

    @inlinable
    init(sink: UnsafeMutableRawPointer, deliver: @escaping (UnsafeMutableRawPointer, Event) -> Void) {
        self.sink = sink
        self.deliver = deliver
    }

    @inlinable
    mutating func emit(_ event: Event) {
        deliver(sink, event)
    }

    /// Calls `body` with a target that writes to `sink`, for the duration of the call.
    @inlinable
    static func with<S: EventSink & ~Copyable>(_ sink: inout S, _ body: (inout EventTarget) -> Void) {
        withUnsafeMutablePointer(to: &sink) { pointer in
            var target = EventTarget(sink: UnsafeMutableRawPointer(pointer)) { raw, event in
                raw.assumingMemoryBound(to: S.self).pointee.emit(event)
            }
            body(&target)
        }
    }
}

extension Array: EventSink where Element == Event {
    /// Appends the event.
    public mutating func emit(_ event: Event) {
        append(event)
    }
}

extension Event {
    /// An `indicator` event: what `viewer` now sees in `conv`.
    public struct Indicator: Sendable, Equatable {
        /// The time of the step, in milliseconds.
        public var at: Int
        /// The conversation.
        public var conv: Identifier
        /// The thread the viewer's screen shows (nil: the main timeline).
        public var thread: Identifier? {
            get { threadID.byteCount == 0 ? nil : threadID }
            set { threadID = newValue ?? Identifier.none }
        }
        /// The thread, or an empty id for the main timeline (not an optional: events
        /// are copied on every write, and an optional id would be copied generically).
        @usableFromInline var threadID: Identifier
        /// The member this indicator is for.
        public var viewer: Identifier
        /// Whether the viewer sees it on the chat screen or in their chat list.
        public var screen: Command.View
        /// The viewer's screen it is for: the main one, or their side pane
        /// (Protocol.md#side-panes).
        public var pane: Command.Pane
        /// The typers, their activities and the phrase the viewer sees.
        public var view: IndicatorView

        /// Creates an indicator event.
        public init(
            at: Int, conv: Identifier, thread: Identifier? = nil, viewer: Identifier,
            screen: Command.View = .chat, pane: Command.Pane = .main, view: IndicatorView
        ) {
            self.at = at
            self.conv = conv
            self.threadID = thread ?? Identifier.none
            self.viewer = viewer
            self.screen = screen
            self.pane = pane
            self.view = view
        }
    }

    /// An `announce` event: the sentence a screen has shown for `--announce-after-ms`,
    /// for the viewer's assistive technology. `thread`, `pane` and `view` are as in
    /// that screen's indicators.
    public struct Announce: Sendable, Equatable {
        /// The time of the step, in milliseconds.
        public var at: Int
        /// The conversation.
        public var conv: Identifier
        /// The thread the screen shows (nil: the main timeline).
        public var thread: Identifier? {
            get { threadID.byteCount == 0 ? nil : threadID }
            set { threadID = newValue ?? Identifier.none }
        }
        /// The thread, or an empty id for the main timeline (not an optional: events
        /// are copied on every write, and an optional id makes every event larger).
        @usableFromInline var threadID: Identifier
        /// The member the sentence is for.
        public var viewer: Identifier
        /// The sentence (never empty).
        public var text: String
        /// The viewer's screen: the main one, or their side pane.
        public var pane: Command.Pane
        /// Whether the screen is the chat or a row of the chat list.
        public var screen: Command.View

        /// Creates an announcement.
        public init(
            at: Int, conv: Identifier, thread: Identifier? = nil, viewer: Identifier,
            pane: Command.Pane = .main, screen: Command.View = .chat, text: String
        ) {
            self.at = at
            self.conv = conv
            self.threadID = thread ?? Identifier.none
            self.viewer = viewer
            self.pane = pane
            self.screen = screen
            self.text = text
        }
    }

    /// A `typing` event: a streak started or stopped.
    public struct Typing: Sendable, Equatable {
        /// Whether the streak started, changed activity or stopped.
        public enum State: String, Sendable {
            /// The first keystroke of a streak.
            case started
            /// A keystroke changed the streak's activity
            /// (Protocol.md#activities-recording-sending-sharing).
            case changed
            /// The streak ended (see ``Reason``).
            case stopped
        }

        /// Why a streak stopped.
        public enum Reason: String, Sendable {
            /// No keystroke for the timeout.
            case timeout
            /// The input box was emptied (`type` with `empty: true`).
            case empty
            /// The user sent the message.
            case send
            /// The user left the conversation.
            case leave
            /// The user was removed from the conversation.
            case removed
            /// The user went offline.
            case offline
            /// The user closed their view of the conversation.
            case closed
            /// The user turned off `send_typing`.
            case hidden
            /// The user typed at another location of the conversation
            /// (Protocol.md#threads).
            case moved
        }

        /// The time of the step, in milliseconds.
        public var at: Int
        /// The conversation.
        public var conv: Identifier
        /// The thread of the streak (nil: the main timeline).
        public var thread: Identifier? {
            get { threadID.byteCount == 0 ? nil : threadID }
            set { threadID = newValue ?? Identifier.none }
        }
        /// The thread, or an empty id for the main timeline.
        @usableFromInline var threadID: Identifier
        /// The typer.
        public var user: Identifier
        /// The streak's status words, with activity ``Activity/status`` (on
        /// `started` and `changed`), else nil. (Stored before the one-byte fields:
        /// events are copied on every write, and this keeps them as small as they
        /// can be.)
        public var status: String?
        /// Started, changed or stopped.
        public var state: State
        /// The streak's activity: on `changed` always, on `started` when it is not
        /// ``Activity/typing``, else nil.
        public var activity: Activity?
        /// Why it stopped (nil unless it stopped).
        public var reason: Reason?

        /// Creates a typing event.
        public init(
            at: Int, conv: Identifier, thread: Identifier? = nil, user: Identifier, state: State,
            activity: Activity? = nil, status: String? = nil, reason: Reason? = nil
        ) {
            self.at = at
            self.conv = conv
            self.threadID = thread ?? Identifier.none
            self.user = user
            self.state = state
            self.activity = activity
            self.status = status
            self.reason = reason
        }
    }

    /// An `ok` event: the command on `line` that carried `id` was applied.
    public struct OK: Sendable, Equatable {
        /// The time the command was applied at, in milliseconds. Not part of the
        /// JSON event (the protocol's `ok` has no `at`); `--format text` shows it.
        public var at: Int
        /// The command's line number.
        public var line: Int
        /// The command's id.
        public var id: Request.ID

        /// Creates an acknowledgement.
        public init(at: Int = 0, line: Int, id: Request.ID) {
            self.at = at
            self.line = line
            self.id = id
        }
    }

    /// An `error` event: the line was not applied, and why. The decoder throws it
    /// for a line it cannot turn into a request.
    public struct Error: Swift.Error, Sendable, Equatable {
        /// The machine-readable reason.
        public enum Code: String, Sendable {
            /// jansson rejected the line, or it holds a NUL byte, `\u0000` or invalid UTF-8.
            case badJSON = "bad_json"
            /// Valid JSON, but not an object.
            case notObject = "not_object"
            /// A required field is absent.
            case missingField = "missing_field"
            /// A field has the wrong type, size or range.
            case badField = "bad_field"
            /// `cmd` is a string but not a known command.
            case unknownCmd = "unknown_cmd"
            /// The user (or `by`) is not a member of the conversation.
            case notMember = "not_member"
            /// `at` is earlier than the current time.
            case timeBackwards = "time_backwards"
            /// `at` or `tick` was used in real clock mode.
            case clockMode = "clock_mode"
            /// The line is longer than `--max-line-bytes`.
            case lineTooLong = "line_too_long"
            /// A `join` would pass `--max-members`, `--max-conversations` or `--max-memberships`.
            case limit = "limit"
        }

        /// The time the line was refused at, in milliseconds: the engine's time when
        /// it wrote the event (it sets this; a decoder's error leaves 0). Not part of
        /// the JSON event (the protocol's `error` has no `at`); `--format text` shows it.
        public var at: Int
        /// The line number.
        public var line: Int
        /// The command's id, when the id itself was valid.
        public var id: Request.ID?
        /// The machine-readable reason.
        public var code: Code
        /// A sentence for a person: what was wrong and where.
        public var message: String
        /// The field at fault, for field and membership errors.
        public var field: String?
        /// jansson's column (in characters, from 1) for `bad_json`, when it has one.
        public var column: Int?

        /// Creates an error event.
        public init(
            at: Int = 0, line: Int, id: Request.ID? = nil, code: Code, message: String,
            field: String? = nil, column: Int? = nil
        ) {
            self.at = at
            self.line = line
            self.id = id
            self.code = code
            self.message = message
            self.field = field
            self.column = column
        }
    }

    /// A `state` event: the reply to `query`.
    public struct State: Sendable, Equatable {
        /// The current time, in milliseconds.
        public var at: Int
        /// The query's id.
        public var id: Request.ID?
        /// The conversation asked about.
        public var conv: Identifier
        /// The thread asked about (nil: the main timeline).
        public var thread: Identifier?
        /// Its members in join order (empty for an unknown conversation).
        public var members: [Identifier]
        /// The members whose view is open, in join order.
        public var open: [Identifier]
        /// The typers at the location asked about, in the order viewers see them.
        public var typing: [Identifier]
        /// Their activities, in the same order; nil when all of them type.
        public var activities: [Activity]?

        /// Creates a state reply.
        public init(
            at: Int, id: Request.ID?, conv: Identifier, thread: Identifier? = nil, members: [Identifier],
            open: [Identifier], typing: [Identifier], activities: [Activity]? = nil
        ) {
            self.at = at
            self.id = id
            self.conv = conv
            self.thread = thread
            self.members = members
            self.open = open
            self.typing = typing
            self.activities = activities
        }
    }

    /// A `stats` event: the reply to `stats`.
    public struct Stats: Sendable, Equatable {
        /// The current time, in milliseconds.
        public var at: Int
        /// The stats command's id.
        public var id: Request.ID?
        /// Lines read, blank ones included (the stats command's own line number).
        public var lines: Int
        /// Commands applied (this one included).
        public var commands: Int
        /// `error` events written.
        public var errors: Int
        /// Live conversations (those with at least one member).
        public var conversations: Int
        /// Memberships, over all conversations.
        public var members: Int
        /// Active typing streaks.
        public var typing: Int
        /// Events written before this one.
        public var events: Int

        /// Creates a stats reply.
        public init(
            at: Int, id: Request.ID?, lines: Int, commands: Int, errors: Int,
            conversations: Int, members: Int, typing: Int, events: Int
        ) {
            self.at = at
            self.id = id
            self.lines = lines
            self.commands = commands
            self.errors = errors
            self.conversations = conversations
            self.members = members
            self.typing = typing
            self.events = events
        }
    }

    /// A `member` event: one membership, as `snapshot` lists them. Replaying a
    /// `join` with its `conv`, `user`, `name` (when present), `send_typing`,
    /// `locale` (when present) and `receive_typing`, then an `open` with its
    /// `thread` and `view` when `open` is true, rebuilds it (Protocol.md, "Snapshots").
    public struct Member: Sendable, Equatable {
        /// The time of the snapshot, in milliseconds.
        public var at: Int
        /// The conversation.
        public var conv: Identifier
        /// The member.
        public var user: Identifier
        /// The user's name as they last gave it (a `join` with it gives the same
        /// display name; the display name itself may be cut), nil when unnamed.
        public var name: String?
        /// Whether others see the user type.
        public var sendTyping: Bool
        /// Whether the member's view of the conversation is open.
        public var open: Bool
        /// The thread the member's open view shows (nil: the main timeline).
        public var thread: Identifier?
        /// What the member's open view is.
        public var view: Command.View
        /// The user's locale, as they gave it (nil: none).
        public var locale: String?
        /// Whether the user sees others type.
        public var receiveTyping: Bool
        /// True when what the member was last sent was forgotten without an event
        /// (an `offline` or `close` moved their screen): the next render of the
        /// conversation compares them from the empty indicator.
        public var forgotten: Bool
        /// The thread the member's side pane shows (nil: they have none;
        /// Protocol.md#side-panes).
        public var side: Identifier?
        /// The membership's place, from 1, in an order the memberships could have
        /// been joined in, when the snapshot does not list them in one (a user's
        /// memberships listed out of their join order); nil when it does.
        public var joined: Int?
        /// The announcement state of the main screen
        /// (Protocol.md#announcements-for-screen-readers).
        public var announcement: Announcement
        /// The announcement state of the side pane.
        public var sideAnnouncement: Announcement

        /// What a screen's announcements are at the snapshot: its pending
        /// announcement and what it last announced. Replaying a `restore` with them
        /// (pending ones in the order of `rank`) rebuilds them.
        public struct Announcement: Sendable, Equatable {
            /// When the pending announcement fires (nil: none is pending).
            public var due: Int?
            /// Its rank, from 1, among all the pending announcements listed, in the
            /// order they fire (by time, then by when their indicators were
            /// written); nil when none is pending.
            public var rank: Int?
            /// The text the screen last announced (nil: nothing).
            public var announced: String?

            /// No pending announcement, nothing announced.
            public static let none = Announcement()

            /// True when the screen has nothing pending and announced nothing.
            public var isNone: Bool { due == nil && announced == nil }

            /// Creates a screen's announcement state.
            public init(due: Int? = nil, rank: Int? = nil, announced: String? = nil) {
                self.due = due
                self.rank = rank
                self.announced = announced
            }
        }

        /// Creates a membership event.
        public init(
            at: Int, conv: Identifier, user: Identifier, name: String?, sendTyping: Bool, open: Bool,
            thread: Identifier? = nil, view: Command.View = .chat, locale: String? = nil,
            receiveTyping: Bool = true, forgotten: Bool = false, side: Identifier? = nil, joined: Int? = nil,
            announcement: Announcement = .none, sideAnnouncement: Announcement = .none
        ) {
            self.at = at
            self.announcement = announcement
            self.sideAnnouncement = sideAnnouncement
            self.side = side
            self.conv = conv
            self.user = user
            self.name = name
            self.sendTyping = sendTyping
            self.open = open
            self.thread = thread
            self.view = view
            self.locale = locale
            self.receiveTyping = receiveTyping
            self.forgotten = forgotten
            self.joined = joined
        }
    }

    /// A `streak` event: one live streak, as `snapshot` lists them (after the
    /// conversation's members, in the order the streaks began). Replaying a `type`
    /// with `timeout_ms` = `deadline` − `at` for each, in the order listed, then
    /// again in the order of `keystroke`, rebuilds the typers, their order and
    /// their deadlines.
    public struct Streak: Sendable, Equatable {
        /// The time of the snapshot, in milliseconds.
        public var at: Int
        /// The conversation.
        public var conv: Identifier
        /// The thread typed in (nil: the main timeline).
        public var thread: Identifier?
        /// The typer.
        public var user: Identifier
        /// What the typer is doing.
        public var activity: Activity
        /// The status words, with activity ``Activity/status``; else nil.
        public var status: String?
        /// When the streak times out (later than `at`).
        public var deadline: Int
        /// The streak's rank, from 1, among all the streaks listed, by the time of
        /// their last keystroke.
        public var keystroke: Int
        /// The streak's rank, from 1, among all the streaks listed, by when they
        /// began, when the snapshot does not list them in that order (a user typing
        /// in several conversations); nil when it does.
        public var started: Int?

        /// Creates a streak event.
        public init(
            at: Int, conv: Identifier, thread: Identifier? = nil, user: Identifier,
            activity: Activity = .typing, status: String? = nil, deadline: Int, keystroke: Int,
            started: Int? = nil
        ) {
            self.at = at
            self.conv = conv
            self.thread = thread
            self.user = user
            self.activity = activity
            self.status = status
            self.deadline = deadline
            self.keystroke = keystroke
            self.started = started
        }
    }

    /// A `snapshot` event: the end of the `member` events a `snapshot` wrote.
    public struct Snapshot: Sendable, Equatable {
        /// The current time, in milliseconds.
        public var at: Int
        /// The snapshot command's id.
        public var id: Request.ID?
        /// The conversations listed.
        public var conversations: Int
        /// The `member` events written.
        public var members: Int
        /// The `streak` events written.
        public var typing: Int

        /// Creates the end of a snapshot.
        public init(at: Int, id: Request.ID?, conversations: Int, members: Int, typing: Int) {
            self.at = at
            self.id = id
            self.conversations = conversations
            self.members = members
            self.typing = typing
        }
    }
}
