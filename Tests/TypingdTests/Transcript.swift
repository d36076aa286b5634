import Foundation

/// One golden transcript in `examples/`: `NAME.in.jsonl`, optional `NAME.args`
/// (options, whitespace-separated) and the expected `NAME.out.jsonl`.
struct Transcript: Sendable, CustomStringConvertible {
    /// The path of the input below `examples/`, without `.in.jsonl`.
    let name: String
    /// `examples/NAME` without the suffixes.
    let stem: URL

    var description: String { name }
    var input: URL { URL(fileURLWithPath: stem.path + ".in.jsonl") }
    var expected: URL { URL(fileURLWithPath: stem.path + ".out.jsonl") }
    var argumentsFile: URL { URL(fileURLWithPath: stem.path + ".args") }

    /// The package's `examples/` folder.
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples")

    /// Every transcript under `examples/`, sorted by name.
    static func all() -> [Transcript] {
        guard let walker = FileManager.default.enumerator(atPath: examples.path) else { return [] }
        var found: [Transcript] = []
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".in.jsonl") else { continue }
            let name = String(path.dropLast(".in.jsonl".count))
            found.append(Transcript(name: name, stem: examples.appendingPathComponent(name)))
        }
        return found.sorted { $0.name < $1.name }
    }

    /// The options to run with: `--clock manual` unless the args file names a clock.
    func arguments() throws -> [String] {
        var arguments: [String] = []
        if FileManager.default.fileExists(atPath: argumentsFile.path) {
            arguments = try String(contentsOf: argumentsFile, encoding: .utf8)
                .split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)
        }
        if !arguments.contains(where: { $0 == "--clock" || $0.hasPrefix("--clock=") }) {
            arguments = ["--clock", "manual"] + arguments
        }
        return arguments
    }
}
