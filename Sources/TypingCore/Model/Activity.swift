/// What a typer is doing (Protocol.md#activities-recording-sending-sharing): typing
/// text, or preparing something else to send. Indicators group typers by activity, one
/// clause each: "Ana is typing; Ben is recording audio...". A typer whose activity is
/// ``status`` says what they do in their own words (Protocol.md#status-in-ones-own-words):
/// a clause of their own, whose verb is those words.
public enum Activity: UInt8, Sendable, CaseIterable, Comparable {
    /// Typing text (the default).
    case typing
    /// Recording a voice note.
    case recordingAudio
    /// Recording a video.
    case recordingVideo
    /// Choosing or sending a photo.
    case sendingPhoto
    /// Choosing or sending a video.
    case sendingVideo
    /// Choosing or sending a file.
    case sendingFile
    /// Choosing or sharing a location.
    case sharingLocation
    /// Doing what the streak's status words say ("is thinking"): never grouped, and
    /// phrased with those words, not with a table's verb.
    case status

    /// The name as written in `activity` fields: `typing`, `recording_audio`, ….
    public var name: String { Activity.names[Int(rawValue)] }

    /// The activity written as `name`, if one is.
    public init?(name: String) {
        guard let index = Activity.names.firstIndex(where: { $0.sameBytes(as: name) }) else { return nil }
        self.init(rawValue: UInt8(index))
    }

    /// The names, in the order of the cases: the one list the decoder, the phrase
    /// tables and the help text use.
    public static let names = [
        "typing", "recording_audio", "recording_video", "sending_photo", "sending_video",
        "sending_file", "sharing_location", "status"
    ]

    /// The names, comma-separated, for messages and help.
    public static let list = names.joined(separator: ", ")

    /// True for the activities a phrase table has a verb for: all but ``status``,
    /// whose verb is the typer's own words.
    public var hasVerb: Bool { self != .status }

    /// The activities a phrase table has a verb for, in the order of the cases
    /// (a table's `verbs` has exactly these).
    public static let phrased = allCases.filter(\.hasVerb)

    /// Their names, comma-separated, for the messages about phrase tables.
    public static let phrasedList = phrased.map(\.name).joined(separator: ", ")

    /// Ordered by declaration.
    public static func < (lhs: Activity, rhs: Activity) -> Bool { lhs.rawValue < rhs.rawValue }
}
