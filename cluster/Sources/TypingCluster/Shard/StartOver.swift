import Foundation

/// A process that runs itself again, in place: the same program, the same
/// arguments, a fresh state (its descriptors close on exec, its threads end).
enum StartOver {
    /// Runs this program again after 0.2 s; ends the process with 75 if it cannot.
    static func now() -> Never {
        pause(.milliseconds(200))
        let arguments = CommandLine.arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArguments.append(nil)
        execv("/proc/self/exe", &cArguments)
        clusterLog("shard", "could not start over (execv: \(String(cString: strerror(errno)))): exiting 75")
        _exit(75)
    }
}
