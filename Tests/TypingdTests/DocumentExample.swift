import Foundation

/// A runnable example in a Markdown document: a `<!-- run: OPTIONS -->` comment,
/// then a fenced input block, then a fenced block with the expected output.
struct DocumentExample: Sendable, CustomStringConvertible {
    /// The document's file name.
    let document: String
    /// The 1-based line of the `<!-- run: -->` comment.
    let line: Int
    /// The options typingd runs with.
    let arguments: [String]
    /// The input lines.
    let input: [String]
    /// The expected output lines.
    let output: [String]
    /// The 0-based line indices of the output block's contents (for blessing).
    let outputRange: Range<Int>

    var description: String { "\(document):\(line)" }

    /// The package's root folder.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The examples of `document` (a file name in the package's root).
    static func parse(_ document: String) -> [DocumentExample] {
        let url = root.appendingPathComponent(document)
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        let lines = text.components(separatedBy: "\n")
        var examples: [DocumentExample] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("<!-- run:"), line.hasSuffix("-->") else {
                index += 1
                continue
            }
            let options = line.dropFirst("<!-- run:".count).dropLast("-->".count)
            guard let input = fence(in: lines, from: index + 1),
                let output = fence(in: lines, from: input.upperBound + 1)
            else { break }
            examples.append(
                DocumentExample(
                    document: document, line: index + 1,
                    arguments: options.split(separator: " ").map(String.init),
                    input: Array(lines[input]), output: Array(lines[output]), outputRange: output))
            index = output.upperBound + 1
        }
        return examples
    }

    /// The contents of the first fenced block starting at or after `start`
    /// (the range excludes the fences); nil if there is none.
    static func fence(in lines: [String], from start: Int) -> Range<Int>? {
        guard let open = lines[start...].firstIndex(where: { $0.hasPrefix("```") }),
            let close = lines[(open + 1)...].firstIndex(where: { $0 == "```" })
        else { return nil }
        return (open + 1)..<close
    }

    /// Writes `actual` as the output block of this example in its document.
    func bless(_ actual: [String]) throws {
        let url = DocumentExample.root.appendingPathComponent(document)
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        // Find this example again: earlier blessings may have moved it.
        let all = DocumentExample.parse(document)
        guard let me = all.first(where: { $0.arguments == arguments && $0.input == input }) else { return }
        lines.replaceSubrange(me.outputRange, with: actual)
        try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
    }
}
