/// What a typer is doing (Protocol.md#activities-recording-sending-sharing): typing
/// text, or preparing something else to send. Indicators group typers by activity, one
/// clause each: "Ana is typing; Ben is recording audio...".
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

    /// The name as written in `activity` fields: `typing`, `recording_audio`, ….
    public var name: String { Activity.names[Int(rawValue)] }

    /// The activity written as `name`, if one is.
    public init?(name: String) {
        guard let index = Activity.names.firstIndex(where: { $0.sameBytes(as: name) }) else { return nil }
        self.init(rawValue: UInt8(index))
    }

    /// The names, in the order of the cases: the one list the decoder, the phrase
    /// tables and the help text use.
    public static let names = ["typing", "recording_audio", "recording_video", "sending_photo", "sending_video",
                               "sending_file", "sharing_location"]

    /// The names, comma-separated, for messages and help.
    public static let list = names.joined(separator: ", ")

    /// Ordered by declaration.
    public static func < (lhs: Activity, rhs: Activity) -> Bool { lhs.rawValue < rhs.rawValue }
}
