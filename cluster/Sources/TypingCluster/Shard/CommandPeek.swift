import Foundation

/// The fields of a command line that tell whether it changes a viewer's screen
/// (a catch-up keeps each viewer's last indicator only while they stay on its
/// screen). Lines whose only `cmd` is one that changes no screen are not parsed.
public struct CommandPeek: Sendable, Equatable {
    public var cmd: String
    public var conv: String?
    public var user: String?
    public var thread: String?
    public var view: String?
    public var receiveTyping: Bool?

    public init(cmd: String, conv: String? = nil, user: String? = nil, thread: String? = nil, view: String? = nil,
                receiveTyping: Bool? = nil) {
        self.cmd = cmd
        self.conv = conv
        self.user = user
        self.thread = thread
        self.view = view
        self.receiveTyping = receiveTyping
    }

    static let quiet: Set<String> = ["type", "send", "tick", "query", "stats", "snapshot", "forget"]
    static let cmdKey = Array("\"cmd\":\"".utf8)

    /// The command's fields; a command that changes no screen gives `cmd` alone;
    /// nil for a line that is no JSON object with a string `cmd`.
    public static func of(_ line: UnsafeRawBufferPointer) -> CommandPeek? {
        // `"cmd":"` cannot occur inside a JSON string (its quotes would be escaped):
        // once only, followed by a quiet name, the line needs no parsing.
        var found: Int? = nil
        var count = 0
        if line.count >= cmdKey.count {
            var index = 0
            while index <= line.count - cmdKey.count {
                if line[index] == 0x22 && line[index + 1] == 0x63 && line[index + 2] == 0x6D && line[index + 3] == 0x64
                    && line[index + 4] == 0x22 && line[index + 5] == 0x3A && line[index + 6] == 0x22 {
                    count += 1
                    found = index + cmdKey.count
                    index += cmdKey.count
                } else {
                    index += 1
                }
            }
        }
        if count == 1, let start = found, let end = line[start...].firstIndex(of: 0x22) {
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
            if quiet.contains(name) { return CommandPeek(cmd: name) }
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let cmd = object["cmd"] as? String else { return nil }
        return CommandPeek(cmd: cmd, conv: object["conv"] as? String, user: object["user"] as? String,
                           thread: object["thread"] as? String, view: object["view"] as? String,
                           receiveTyping: object["receive_typing"] as? Bool)
    }
}
