/// What a command line asks the engine to do, with its fields.
///
/// The decoder produces a `Command` only when every field has the right type and
/// size; the engine checks what depends on state (membership, limits, time).
public enum Command: Sendable, Equatable {
    /// `user` becomes a member of `conv`; `name`, `sendTyping`, `locale` and
    /// `receiveTyping`, when given, set the user's display name, whether others see
    /// them type, the language of their indicators and whether they see others type.
    case join(
        conv: Identifier, user: Identifier, name: String? = nil, sendTyping: Bool? = nil,
        locale: String? = nil, receiveTyping: Bool? = nil)
    /// A keystroke in `user`'s input box, at `thread` of `conv` (nil: the main
    /// timeline), doing `activity`; `empty` means the box is now empty; `timeout`,
    /// when given, is this keystroke's timeout in milliseconds. `status` holds the
    /// words of activity ``Activity/status`` (Protocol.md#status-in-ones-own-words):
    /// the decoder gives them exactly with that activity; the engine shows a status
    /// keystroke without words as if it had empty ones.
    ///
    /// The fields are in the order that packs them in 123 bytes, so that a
    /// `Command` stays within 128 bytes, which the compiler copies inline: at 137
    /// bytes every copy of a decoded command became a call to `memcpy`, about 1.5 %
    /// of the W1 workload's instructions (bench/RESULTS.md).
    case type(
        conv: Identifier, user: Identifier, thread: Identifier? = nil, status: String? = nil,
        timeout: Int? = nil, activity: Activity = .typing, empty: Bool = false)
    /// `user` sent a message at `thread` of `conv` (nil: the main timeline): their
    /// streak there stops at once.
    case send(conv: Identifier, user: Identifier, thread: Identifier? = nil)
    /// `user` leaves `conv`.
    case leave(conv: Identifier, user: Identifier)
    /// `user` is removed from `conv`, optionally by member `by`.
    case remove(conv: Identifier, user: Identifier, by: Identifier?)
    /// `user` went offline: all their streaks stop, then all their views close.
    case offline(user: Identifier)
    /// `user`'s view of `conv` opens: the chat screen at `thread` (nil: the main
    /// timeline), or, with `view` ``View/list``, the conversation's row in their chat
    /// list. With `pane` ``Pane/side``, the user's side pane shows `thread` instead
    /// (Protocol.md#side-panes), and the main screen is left as it is.
    case open(conv: Identifier, user: Identifier, thread: Identifier? = nil, view: View = .chat, pane: Pane = .main)
    /// `user`'s view of `conv` closes, and their streak there stops unless their side
    /// pane shows it; with `pane` ``Pane/side``, the side pane is removed instead.
    case close(conv: Identifier, user: Identifier, pane: Pane = .main)
    /// Sets what belongs to `user` rather than to a membership.
    case user(
        user: Identifier, name: String? = nil, sendTyping: Bool? = nil, locale: String? = nil,
        receiveTyping: Bool? = nil)
    /// Advances the manual clock (the time is the request's `at`).
    case tick
    /// Asks for the members and typers of `conv`, at `thread` (nil: the main timeline).
    case query(conv: Identifier, thread: Identifier? = nil)
    /// Asks for the counters.
    case stats
    /// Asks for every membership, as `member` events, then a `snapshot` event.
    case snapshot
    /// Forgets what `user` was last sent in `conv`, without an event: their view
    /// closes as `offline` closes it, and they are compared from the empty
    /// indicator at the next render of `conv`. For rebuilding a snapshot's
    /// `forgotten` members; it stops no streak and renders nothing.
    case forget(conv: Identifier, user: Identifier)
    /// Sets the announcement state of one screen of `user` in `conv` (the main
    /// screen, or with `pane` ``Pane/side`` the side pane), without an event: its
    /// pending announcement fires at `announceAt` (none when nil), after the ones
    /// already pending at that time, and it last announced `announced` (nothing
    /// when nil or empty). For rebuilding a snapshot's announcements
    /// (Protocol.md#snapshots); it renders nothing, and without
    /// `--announce-after-ms` it keeps nothing.
    case restore(
        conv: Identifier, user: Identifier, pane: Pane = .main, announceAt: Int? = nil, announced: String? = nil)

    /// What an open view shows (Protocol.md#the-chat-list).
    public enum View: String, Sendable, CaseIterable {
        /// The conversation's chat screen (the default).
        case chat
        /// The conversation's row in the user's chat list.
        case list
    }

    /// Which of a membership's two screens an `open` or `close` is about
    /// (Protocol.md#side-panes).
    public enum Pane: String, Sendable, CaseIterable {
        /// The main screen (the default): the view of version 3.
        case main
        /// The side pane, which shows a thread beside the main screen.
        case side
    }

    /// The commands' names as written in `cmd`: the one list the decoder, its
    /// messages and the help text use.
    public enum Name: String, Sendable, CaseIterable {
        /// ``Command/join(conv:user:name:sendTyping:locale:receiveTyping:)``
        case join
        /// ``Command/type(conv:user:thread:status:timeout:activity:empty:)``
        case type
        /// ``Command/send(conv:user:thread:)``
        case send
        /// ``Command/leave(conv:user:)``
        case leave
        /// ``Command/remove(conv:user:by:)``
        case remove
        /// ``Command/offline(user:)``
        case offline
        /// ``Command/open(conv:user:thread:view:pane:)``
        case open
        /// ``Command/close(conv:user:pane:)``
        case close
        /// ``Command/user(user:name:sendTyping:locale:receiveTyping:)``
        case user
        /// ``Command/tick``
        case tick
        /// ``Command/query(conv:thread:)``
        case query
        /// ``Command/stats``
        case stats
        /// ``Command/snapshot``
        case snapshot
        /// ``Command/forget(conv:user:)``
        case forget
        /// ``Command/restore(conv:user:pane:announceAt:announced:)``
        case restore

        /// The names, comma-separated, for messages and help.
        public static let list = allCases.map(\.rawValue).joined(separator: ", ")
    }
}

/// One decoded input line: a command with its optional id and time.
public struct Request: Sendable, Equatable {
    /// The optional `id` of a command, echoed in its reply so a client can match them.
    ///
    /// The protocol allows a string of at most 256 bytes or an integer within
    /// ±(2^53−1); the decoder enforces those limits, this type only carries the value.
    public enum ID: Sendable, Equatable {
        /// A string id, echoed byte for byte.
        case string(String)
        /// An integer id, echoed as an integer.
        case integer(Int)

        /// Equal when both are integers of the same value or strings of the same bytes.
        public static func == (lhs: ID, rhs: ID) -> Bool {
            switch (lhs, rhs) {
            case let (.string(a), .string(b)): return a.sameBytes(as: b)
            case let (.integer(a), .integer(b)): return a == b
            default: return false
            }
        }
    }

    // The command first: a copy of a request is then the command's bytes (at most
    // 128, copied inline) and the three small fields, not one run of more than
    // 128 bytes that the compiler copies with a call to `memcpy`.

    /// What to do.
    public var command: Command
    /// Where the command came from, for errors and replies: the input line number
    /// when it was read from a stream (the first line is 1), else whatever number
    /// the caller chooses (0 by default).
    public var line: Int
    /// The client's id, echoed in the reply.
    public var id: ID?
    /// The command's time in milliseconds (manual clock only), 0 … ``Engine/maxTime``.
    public var at: Int?

    /// A request to apply `command` at time `at` (the engine's current time when
    /// nil), answered with an `ok` carrying `id` when given; `line` is echoed in its
    /// reply or error.
    public init(_ command: Command, id: ID? = nil, at: Int? = nil, line: Int = 0) {
        self.line = line
        self.id = id
        self.at = at
        self.command = command
    }
}

extension String {
    /// True when `self` and `other` have exactly the same UTF-8 bytes.
    ///
    /// Unlike `==`, which treats canonically equivalent strings as equal, this is
    /// the comparison the protocol needs for ids and for "did the text change".
    func sameBytes(as other: String) -> Bool {
        let lhs = utf8, rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        let fast: Bool? =
            lhs.withContiguousStorageIfAvailable { left in
                rhs.withContiguousStorageIfAvailable { right in
                    left.elementsEqual(right)
                }
            } ?? nil
        return fast ?? lhs.elementsEqual(rhs)
    }
}
