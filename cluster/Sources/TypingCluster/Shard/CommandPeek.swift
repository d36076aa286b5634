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

    /// A flat object of strings without escapes, numbers, booleans and null, each
    /// key once (what routers send): read here; anything else is nil (parsed by
    /// Foundation).
    static func flat(_ line: UnsafeRawBufferPointer) -> CommandPeek? {
        var index = 0
        let count = line.count
        func skipSpace() { while index < count, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 } }
        func string() -> String? {
            guard index < count, line[index] == 0x22 else { return nil }
            let start = index + 1
            var end = start
            while end < count, line[end] != 0x22 {
                if line[end] == 0x5C || line[end] < 0x20 { return nil }
                end += 1
            }
            guard end < count else { return nil }
            index = end + 1
            return String(validating: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        }
        skipSpace()
        guard index < count, line[index] == 0x7B else { return nil }
        index += 1
        var fields: [String: Any] = [:]
        skipSpace()
        if index < count, line[index] == 0x7D { return nil }
        while true {
            skipSpace()
            guard let key = string(), fields[key] == nil else { return nil }
            skipSpace()
            guard index < count, line[index] == 0x3A else { return nil }
            index += 1
            skipSpace()
            guard index < count else { return nil }
            switch line[index] {
            case 0x22:
                guard let value = string() else { return nil }
                fields[key] = value
            case 0x74, 0x66, 0x6E:   // true, false, null
                let start = index
                while index < count, line[index] >= 0x61, line[index] <= 0x7A { index += 1 }
                let word = String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<index]), as: UTF8.self)
                switch word {
                case "true": fields[key] = true
                case "false": fields[key] = false
                case "null": fields[key] = 0
                default: return nil
                }
            case 0x2D, 0x30...0x39:
                while index < count, line[index] == 0x2D || line[index] == 0x2B || line[index] == 0x2E
                        || line[index] == 0x65 || line[index] == 0x45 || (line[index] >= 0x30 && line[index] <= 0x39) { index += 1 }
                fields[key] = 0
            default:
                return nil
            }
            skipSpace()
            guard index < count else { return nil }
            if line[index] == 0x2C { index += 1; continue }
            if line[index] == 0x7D { index += 1; break }
            return nil
        }
        skipSpace()
        guard index == count, let cmd = fields["cmd"] as? String else { return nil }
        return CommandPeek(cmd: cmd, conv: fields["conv"] as? String, user: fields["user"] as? String,
                           thread: fields["thread"] as? String, view: fields["view"] as? String,
                           receiveTyping: fields["receive_typing"] as? Bool)
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
        if let flat = flat(line) { return flat }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let cmd = object["cmd"] as? String else { return nil }
        return CommandPeek(cmd: cmd, conv: object["conv"] as? String, user: object["user"] as? String,
                           thread: object["thread"] as? String, view: object["view"] as? String,
                           receiveTyping: object["receive_typing"] as? Bool)
    }
}
