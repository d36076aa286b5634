import ArgumentParser
import TypingCluster
#if canImport(Glibc)
import Glibc
#endif

/// The options every role shares: where the settings and the servers are.
struct ClusterOptions: ParsableArguments {
    @Option(
        name: .long, help: ArgumentHelp("A file of settings, lines NAME=VALUE (see `ctl settings`).", valueName: "file")
    )
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The servers, comma-separated URLs (default: the 3 local nodes at PORT_BASE).", valueName: "urls"))
    var servers: String?

    @Option(name: .long, help: ArgumentHelp("The number of partitions (PARTITIONS; default 4).", valueName: "n"))
    var partitions: Int?

    @Flag(
        name: .customLong("servers-in-order"),
        help: "Try the servers in the order given (default: shuffled, to spread clients over the nodes).")
    var serversInOrder = false

    /// The settings: the options given over the environment over the file.
    func settings() throws -> ClusterSettings {
        var text: String? = nil
        if let config {
            text = try ConfigFile.contents(of: config)
        }
        var environment: [String: String] = [:]
        for setting in ClusterSettings.table {
            if let value = getenv(setting.name) { environment[setting.name] = String(cString: value) }
        }
        var settings = try ClusterSettings.load(fileText: text, fileName: config ?? "", environment: environment)
        if let partitions {
            try settings.set("PARTITIONS", String(partitions), from: "--partitions")
        }
        return settings
    }

    /// The servers to connect to.
    func serverList(_ settings: ClusterSettings) throws -> [String] {
        guard let servers else { return settings.localServers }
        let list = servers.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        if list.isEmpty { throw ValidationError("--servers names no server") }
        return list.map { $0.contains("://") ? $0 : "nats://\($0)" }
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}

/// A user's file: a regular file of bounded size, UTF-8.
enum ConfigFile {
    static let limit = 1 << 20

    /// The settings file (`--config`): at most 1 MiB.
    static func contents(of path: String) throws -> String {
        try contents(of: path, option: "--config", limit: limit)
    }

    /// The text of `path`, given with `option`, at most `limit` bytes.
    static func contents(of path: String, option: String, limit: Int) throws -> String {
        let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ValidationError("\(option) \(path): not a regular file") }
        guard info.st_size <= limit else { throw ValidationError("\(option) \(path): larger than \(size)") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > limit { throw ValidationError("\(option) \(path): larger than \(size)") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ValidationError("\(option) \(path): not UTF-8")
        }
        return text
    }
}
