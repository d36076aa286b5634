/// What the engine knows about a user while they are a member somewhere.
struct UserRecord {
    /// The user's id.
    var id: Identifier
    /// The display name shown in phrases.
    var displayName: String
    /// How many conversations the user is a member of; the record goes at zero.
    var memberships: Int
    /// The user's active streaks, in the order they began.
    var streaks: [Int32]
}
