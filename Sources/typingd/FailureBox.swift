/// The I/O failure met while output spilled in the middle of a step (a closure
/// cannot throw through the engine), checked by the loop afterwards.
final class FailureBox {
    /// The first failure, if any.
    var failure: IOFailure?
}
