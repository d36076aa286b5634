import Foundation
import Testing

/// The README's first command, as written, in a sandbox whose PATH holds only stand-ins
/// for id, sudo, apt-get, pkg-config and swift that record what they are asked:
/// it installs through sudo only for a user who is not root, runs apt-get only while
/// something is missing (no pkg-config; no jansson.pc), then builds and runs the example.
@Suite("README's set-up command")
struct ReadmeSetupTests {
    /// The first line of the README's first `sh` block.
    static func setUpCommand() throws -> String {
        let readme = try String(contentsOf: DocumentExample.root.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(readme.split(separator: "```sh\n", maxSplits: 1).dropFirst().first)
        let lines = block.split(separator: "\n")
        #expect(
            lines.count >= 3 && lines[1] == "swift test" && lines[2] == "```",
            "two commands: set up and run, then the tests")
        return String(try #require(lines.first))
    }

    /// A sandbox: `bin` (the only folder on PATH) and the folder the command runs in.
    struct Sandbox {
        let root: URL
        var bin: URL { root.appendingPathComponent("bin") }
        var log: URL { root.appendingPathComponent("log") }

        init(uid: Int, pkgConfig: Bool, jansson: Bool) throws {
            root = try Daemon.temporaryFolder("readme")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("work/.build/release"),
                withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("work/examples/transcripts"),
                withIntermediateDirectories: true)
            try "{}\n".write(
                to: root.appendingPathComponent("work/examples/transcripts/02_group_fills_up.in.jsonl"),
                atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(
                atPath: bin.appendingPathComponent("sh").path, withDestinationPath: "/bin/sh")
            let log = log.path, bin = bin.path, root = root.path
            try script("id", #"[ "$1" = -u ] && echo "${FAKE_UID:-\#(uid)}""#)
            try script("sudo", #"echo "sudo $*" >> \#(log); FAKE_UID=0 exec "$@""#)
            try script(
                "apt-get",
                """
                if [ "$(id -u)" -ne 0 ]; then echo "apt-get $* refused: not root" >> \(log); exit 100; fi
                echo "apt-get $*" >> \(log)
                case " $* " in *" pkg-config "*) /bin/cp \(root)/pkg-config.real \(bin)/pkg-config ;; esac
                case " $* " in *" libjansson-dev "*) : > \(root)/jansson.pc ;; esac
                """)
            try script(
                "pkg-config.real", #"[ "$1 $2" = "--exists jansson" ] && [ -e \#(root)/jansson.pc ]"#, in: self.root)
            if pkgConfig {
                try script("pkg-config", #"[ "$1 $2" = "--exists jansson" ] && [ -e \#(root)/jansson.pc ]"#)
            }
            if jansson {
                try "".write(to: self.root.appendingPathComponent("jansson.pc"), atomically: true, encoding: .utf8)
            }
            try script("swift", #"echo "swift $*" >> \#(log)"#)
            try script(
                "typingd", #"echo "typingd $*" >> \#(log)"#, in: self.root.appendingPathComponent("work/.build/release")
            )
        }

        func script(_ name: String, _ body: String, in folder: URL? = nil) throws {
            let url = (folder ?? bin).appendingPathComponent(name)
            try ("#!/bin/sh\n" + body + "\n").write(to: url, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        }

        /// Runs `command` with `shell`; what the stand-ins recorded (this run only).
        func run(_ command: String, shell: String) throws -> [String] {
            try? FileManager.default.removeItem(at: log)
            let run = try TestProcess.run(
                URL(fileURLWithPath: shell), ["-c", command],
                environment: ["PATH": bin.path, "HOME": root.path], inheritEnvironment: false,
                directory: root.appendingPathComponent("work"))
            #expect(run.status == 0, "\(shell): exit \(run.status): \(run.errors)")
            #expect(run.errors.isEmpty, "\(shell) wrote on stderr: \(run.errors)")
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }
    }

    static let install = ["apt-get update", "apt-get install -y libjansson-dev pkg-config"]
    static let buildAndRun = ["swift build -c release", "typingd --clock manual"]

    /// The shells a reader may paste it into.
    static var shells: [String] {
        ["/bin/sh", "/bin/bash"].filter { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("as root with nothing installed: apt-get without sudo, then never again; then the build and the example")
    func root() throws {
        let command = try Self.setUpCommand()
        for shell in Self.shells {
            let sandbox = try Sandbox(uid: 0, pkgConfig: false, jansson: false)
            defer { try? FileManager.default.removeItem(at: sandbox.root) }
            #expect(try sandbox.run(command, shell: shell) == Self.install + Self.buildAndRun, "\(shell)")
            #expect(try sandbox.run(command, shell: shell) == Self.buildAndRun, "\(shell): apt-get ran again")
        }
    }

    @Test("as a user with sudo: apt-get through sudo, then never again")
    func user() throws {
        let command = try Self.setUpCommand()
        for shell in Self.shells {
            let sandbox = try Sandbox(uid: 1000, pkgConfig: false, jansson: false)
            defer { try? FileManager.default.removeItem(at: sandbox.root) }
            let first = try sandbox.run(command, shell: shell)
            #expect(first.first?.hasPrefix("sudo sh -c ") == true, "\(shell): \(first)")
            #expect(Array(first.dropFirst()) == Self.install + Self.buildAndRun, "\(shell): \(first)")
            #expect(try sandbox.run(command, shell: shell) == Self.buildAndRun, "\(shell): apt-get ran again")
        }
    }

    @Test("pkg-config without jansson.pc installs; both present: no apt-get")
    func partly() throws {
        let command = try Self.setUpCommand()
        let missing = try Sandbox(uid: 0, pkgConfig: true, jansson: false)
        defer { try? FileManager.default.removeItem(at: missing.root) }
        #expect(try missing.run(command, shell: "/bin/sh") == Self.install + Self.buildAndRun)
        let ready = try Sandbox(uid: 1000, pkgConfig: true, jansson: true)
        defer { try? FileManager.default.removeItem(at: ready.root) }
        #expect(try ready.run(command, shell: "/bin/sh") == Self.buildAndRun)
    }
}
