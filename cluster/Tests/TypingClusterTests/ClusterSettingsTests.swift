import Testing
@testable import TypingCluster

/// Reading settings files and the environment: every malformed value stops with one line that names it.
@Suite struct ClusterSettingsTests {
    func failure(_ text: String, environment: [String: String] = [:]) -> String? {
        do {
            _ = try ClusterSettings.load(fileText: text, fileName: "c.conf", environment: environment)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func readsAsTheShellReads() throws {
        let text =
            "# comment\nexport PARTITIONS=8\nTYPINGD_OPTIONS=\"--phrases phrases\" # note\nVIEWER_BUCKETS='32'\nPARTITIONS=6\n"
        let settings = try ClusterSettings.load(
            fileText: text, fileName: "c.conf", environment: ["VIEWER_BUCKETS": "64"])
        #expect(settings.partitions == 6)
        #expect(settings.typingdOptions == "--phrases phrases")
        #expect(settings.viewerBuckets == 64) // the environment wins
    }

    @Test func malformedValuesSayWhereAndWhat() {
        #expect(failure("PARTITIONS=\"4\n") == "c.conf:1: a \" is not closed")
        #expect(failure("\nPARTITIONS=four\n") == "c.conf:2: PARTITIONS=\"four\" is not a whole number from 1 to 4096")
        #expect(failure("PARTITIONS=0\n") != nil)
        #expect(failure("STORAGE=disk\n") == "c.conf:1: STORAGE=\"disk\" is not file or memory")
        #expect(failure("LEASE_TTL=nan\n") != nil)
        #expect(failure("REPLICAS='3\n") == "c.conf:1: a ' is not closed")
        #expect(
            failure("", environment: ["PORT_BASE": "99999"])
                == "the environment: PORT_BASE=\"99999\" is not a whole number from 1 to 61533")
    }

    /// TYPINGD_OPTIONS is read by typingd's own option parser: protocol 4's
    /// options pass, a value typingd refuses stops with typingd's message.
    @Test func typingdOptionsAreReadAsTypingdReadsThem() throws {
        let v4 = "--phrases phrases --quiet-above 20 --several-after 3 --announce-after-ms 1500"
        let settings = try ClusterSettings.load(
            fileText: "TYPINGD_OPTIONS=\"\(v4)\"\n", fileName: "c.conf", environment: [:])
        #expect(settings.typingdOptions == v4)
        #expect(
            failure("TYPINGD_OPTIONS='--quiet-above 0'\n")
                == "c.conf:1: TYPINGD_OPTIONS=\"--quiet-above 0\" is not typingd's options (--quiet-above must be from 1 to 2147483647, not 0)"
        )
        #expect(
            failure("", environment: ["TYPINGD_OPTIONS": "--announce-after-ms 86400001"])?
                .hasSuffix("(--announce-after-ms must be from 1 to 86400000, not 86400001)") == true)
        #expect(
            failure("TYPINGD_OPTIONS='--several-after many'\n")?.contains("'many' is invalid for '--several-after")
                == true)
        #expect(failure("TYPINGD_OPTIONS='--quiet'\n")?.contains("Unknown option '--quiet'") == true)
        #expect(failure("TYPINGD_OPTIONS='--phrases \"phrases'\n") != nil, "a quote not closed in the words")
    }

    /// cluster/cluster.conf holds the defaults: the file and the table agree.
    @Test func theShippedFileIsTheDefaults() throws {
        let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let text = try #require(readText("/" + path + "/cluster.conf"))
        let settings = try ClusterSettings.load(fileText: text, fileName: "cluster.conf", environment: [:])
        #expect(settings == ClusterSettings())
        for setting in ClusterSettings.table {
            #expect(text.contains("\n\(setting.name)="), "cluster.conf lacks \(setting.name)")
        }
    }

    func readText(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif
