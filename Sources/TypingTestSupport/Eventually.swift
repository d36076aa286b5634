import Foundation

/// Waits for `condition` to hold, up to `timeout` seconds (a generous deadline:
/// the wait ends as soon as it holds), looking again after 1 ms, then after
/// waits that double up to 50 ms. True when it held; the caller says what it waited
/// for: `#expect(eventually { server.isUp }, "the server listens")`.
///
/// For the state of another process or thread that gives no event to wait on;
/// where there is one (a line, a reply), wait on it instead.
public func eventually(timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var pause = 0.001
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: min(pause, max(deadline.timeIntervalSinceNow, 0)))
        pause = min(pause * 2, 0.05)
    }
}
