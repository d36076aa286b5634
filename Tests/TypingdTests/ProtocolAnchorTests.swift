import Foundation
import Testing

/// Comments in Sources/ and Tests/ point at the rules they implement as
/// `Protocol.md#…`: a section of the reference that is in the repository, so a
/// reader can follow the link. These tests hold every such link to a heading that
/// exists (with GitHub's anchors), and keep out the section signs of references to a
/// specification the repository does not hold.
@Suite("Links from the code to Protocol.md")
struct ProtocolAnchorTests {
    /// The section sign, built from its scalar so that this file does not hold it.
    static let sectionSign = Character(Unicode.Scalar(UInt8(0xA7)))

    /// GitHub's anchor for a heading's text: lowercased; every character but letters,
    /// marks, numbers, `_`, `-` and spaces dropped; spaces turned into `-`.
    static func slug(_ heading: String) -> String {
        var slug = ""
        for scalar in heading.lowercased().unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .nonspacingMark, .spacingMark, .enclosingMark,
                .decimalNumber, .letterNumber, .otherNumber, .connectorPunctuation:
                slug.unicodeScalars.append(scalar)
            default:
                if scalar == "-" || scalar == " " { slug.append("-") }
            }
        }
        return slug
    }

    /// The anchors of a Markdown document, in order: one per ATX heading outside
    /// ``` fences, a repeated one suffixed `-1`, `-2`, … as GitHub does, and the
    /// explicit `<a id="…">` anchors.
    static func anchors(ofMarkdown text: String) -> [String] {
        var anchors: [String] = []
        var used: Set<String> = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop(while: { $0 == " " })
            if trimmed.hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            for id in explicitAnchors(in: String(line)) where used.insert(id).inserted {
                anchors.append(id)
            }
            let hashes = trimmed.prefix(while: { $0 == "#" }).count
            guard (1...6).contains(hashes), line.count - trimmed.count <= 3 else { continue }
            let rest = trimmed.dropFirst(hashes)
            guard rest.isEmpty || rest.first == " " || rest.first == "\t" else { continue }
            var title = rest.trimmingCharacters(in: .whitespaces)
            // A closing sequence of `#`s (after a space) is not part of the text.
            if let closing = title.range(of: #"(^|\s)#+$"#, options: .regularExpression) {
                title = String(title[..<closing.lowerBound]).trimmingCharacters(in: .whitespaces)
            }
            let base = slug(title)
            var anchor = base
            var suffix = 0
            while used.contains(anchor) {
                suffix += 1
                anchor = "\(base)-\(suffix)"
            }
            used.insert(anchor)
            anchors.append(anchor)
        }
        return anchors
    }

    /// The ids of `<a id="…">` (or `name`) elements in a line.
    static func explicitAnchors(in line: String) -> [String] {
        var ids: [String] = []
        var rest = line[...]
        while let open = rest.range(of: "<a ") {
            rest = rest[open.upperBound...]
            guard let close = rest.firstIndex(of: ">") else { break }
            let tag = rest[..<close]
            for attribute in ["id=\"", "name=\""] {
                if let start = tag.range(of: attribute), let end = tag[start.upperBound...].firstIndex(of: "\"") {
                    ids.append(String(tag[start.upperBound..<end]))
                }
            }
            rest = rest[close...]
        }
        return ids
    }

    /// A link from a source file to Protocol.md.
    struct Link: CustomStringConvertible {
        let file: String
        let line: Int
        let anchor: String
        var description: String { "\(file):\(line): Protocol.md#\(anchor)" }
    }

    /// Every `Protocol.md#…` in `text`, with its line.
    static func links(in text: String, file: String) -> [Link] {
        let anchorCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        var links: [Link] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = line[...]
            while let found = rest.range(of: "Protocol.md#") {
                let anchor = rest[found.upperBound...].prefix(while: { anchorCharacters.contains($0) })
                if !anchor.isEmpty {
                    links.append(Link(file: file, line: index + 1, anchor: String(anchor)))
                }
                rest = rest[found.upperBound...]
            }
        }
        return links
    }

    /// The .swift files under `folder` (a path relative to the package's root), as
    /// (relative path, URL), in a stable order.
    static func swiftFiles(under folder: String) -> [(path: String, url: URL)] {
        let base = DocumentExample.root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var files: [(path: String, url: URL)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let relative = String(url.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1))
            files.append((path: "\(folder)/\(relative)", url: url))
        }
        return files.sorted { $0.path < $1.path }
    }

    /// This file, which may hold anything about section signs but the character.
    static let thisFile = URL(fileURLWithPath: #filePath).standardizedFileURL.path

    @Test("GitHub's anchors: punctuation dropped, spaces to -, repeated headings numbered, fences skipped")
    func anchorRule() {
        #expect(Self.slug("Views: who receives indicators") == "views-who-receives-indicators")
        #expect(Self.slug("Output for people: `--format text`") == "output-for-people---format-text")
        #expect(Self.slug("Manual clock (`--clock manual`)") == "manual-clock---clock-manual")
        #expect(Self.slug("Choices made where the spec is silent") == "choices-made-where-the-spec-is-silent")
        let document = """
            # Title
            ## Steps
            ```
            ## Not a heading
            #not-a-heading-either
            ```
            ### Steps ##
            #Hashtag
            <a id="kept"></a>
            ## Steps
            """
        #expect(Self.anchors(ofMarkdown: document) == ["title", "steps", "steps-1", "kept", "steps-2"])
    }

    @Test("every Protocol.md#… in Sources/ and Tests/ names a heading of Protocol.md")
    func linksResolve() throws {
        let protocolText = try String(
            contentsOf: DocumentExample.root.appendingPathComponent("Protocol.md"),
            encoding: .utf8)
        let anchors = Set(Self.anchors(ofMarkdown: protocolText))
        #expect(
            anchors.contains("framing-lines-in-lines-out") && anchors.contains("display-names"),
            "Protocol.md's headings were not found: \(anchors.sorted())")
        var count = 0
        for folder in ["Sources", "Tests"] {
            let files = Self.swiftFiles(under: folder)
            #expect(!files.isEmpty, "no .swift files under \(folder)/")
            for file in files {
                let text = try String(contentsOf: file.url, encoding: .utf8)
                for link in Self.links(in: text, file: file.path) {
                    count += 1
                    if !anchors.contains(link.anchor) {
                        Issue.record("\(link): Protocol.md has no heading with this anchor")
                    }
                }
            }
        }
        // The sources link to the reference in many places; none found means the
        // scan looked in the wrong place, not that every link is right.
        #expect(count >= 40, "only \(count) links to Protocol.md found")
    }

    @Test("no section sign in Sources/ or Tests/: references point into Protocol.md")
    func noSectionSigns() throws {
        for folder in ["Sources", "Tests"] {
            for file in Self.swiftFiles(under: folder) where file.url.standardizedFileURL.path != Self.thisFile {
                let text = try String(contentsOf: file.url, encoding: .utf8)
                guard text.contains(Self.sectionSign) else { continue }
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains(Self.sectionSign) {
                    Issue.record(
                        "\(file.path):\(index + 1): a section sign; link to a heading of Protocol.md instead: \(line.trimmingCharacters(in: .whitespaces))"
                    )
                }
            }
        }
    }
}
