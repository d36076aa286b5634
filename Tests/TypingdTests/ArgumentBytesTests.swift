import Foundation
import Glibc
import Testing

/// Arguments that are not UTF-8. ArgumentParser sees the command line as Strings,
/// in which such a byte is already U+FFFD: typingd refuses the argument (exit 64,
/// named escaped) rather than act on another path than the one it was given.
@Suite("Arguments that are not UTF-8")
struct ArgumentBytesTests {
    /// Runs typingd through `sh`, whose `printf` makes the bytes (Process takes
    /// Strings); `script` sees the binary as `$T` and a fresh folder as `$D`.
    static func run(_ script: String, in folder: URL) throws -> (stderr: String, status: Int32) {
        let run = try TestProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "T=\"$0\"; D=\"$1\"; " + script, Daemon.binary.path, folder.path])
        return (run.errors, run.status)
    }

    @Test("--record with a byte 0xFF in its path writes no file under another name: exit 64, the path escaped")
    func record() throws {
        let dir = try Daemon.temporaryFolder("argument-bytes")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (stderr, status) = try Self.run(#"echo '{}' | "$T" --record "$D/$(printf 'r\377.rec')""#, in: dir)
        #expect(status == 64, "\(stderr)")
        #expect(stderr.contains(#"r\xFF.rec"#) && !stderr.contains("\u{FFFD}"), "\(stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test(
        "--phrases, replay and check with such a path: exit 64, named escaped, never with U+FFFD",
        arguments: [
            #""$T" --phrases "$D/$(printf 'd\377.json')""#, #""$T" replay "$D/$(printf 'd\377.json')""#,
            #""$T" check "$D/$(printf 'd\377.json')""#
        ])
    func paths(_ script: String) throws {
        let dir = try Daemon.temporaryFolder("argument-bytes")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (stderr, status) = try Self.run(script, in: dir)
        #expect(status == 64, "\(stderr)")
        #expect(stderr.contains(#"d\xFF.json"#) && !stderr.contains("\u{FFFD}"), "\(stderr)")
    }
}
