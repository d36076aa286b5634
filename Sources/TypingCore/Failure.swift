/// Why the engine refused a command that decoded fine (membership, limits).
struct Failure: Error, Equatable {
    /// The error code.
    var code: ErrorCode
    /// A sentence for a person.
    var message: String
    /// The field at fault.
    var field: String?

    /// `user` (named by `field`) is not a member of `conv`.
    static func notMember(_ user: Identifier, of conv: Identifier, field: String) -> Failure {
        let who = field == "user" ? "user \(quoted(user))" : "\"\(field)\" user \(quoted(user))"
        return Failure(code: .notMember,
                       message: "\(who) is not a member of conversation \(quoted(conv))",
                       field: field)
    }

    /// Quotes an id for a message, shortening a long one.
    static func quoted(_ id: Identifier) -> String {
        let text = id.string
        if text.count <= 64 { return "\"" + text + "\"" }
        return "\"" + text.prefix(61) + "...\""
    }
}
