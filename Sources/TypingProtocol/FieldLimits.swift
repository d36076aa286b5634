/// Sizes and ranges the decoder enforces, from §2 of the protocol.
public enum FieldLimits {
    /// The most bytes of a string `id`, `conv`, `user` or `by`.
    public static let maxIdentifierBytes = 256
    /// The most bytes of a `name`.
    public static let maxNameBytes = 1024
    /// The largest `at` and the largest magnitude of an integer `id`: 2^53 − 1.
    public static let maxInteger = 9_007_199_254_740_991
}
