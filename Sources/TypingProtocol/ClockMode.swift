/// Where time comes from.
public enum ClockMode: String, Sendable, CaseIterable {
    /// Milliseconds since start on a monotonic clock; timeouts fire while idle.
    case real
    /// Time is what commands say (`at`); it starts at 0.
    case manual
}
