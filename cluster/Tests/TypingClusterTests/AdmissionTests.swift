import Testing
@testable import TypingCluster

@Suite("Admission: a router's lines applied once")
struct AdmissionTests {
    static func headers(_ first: Int) -> [String: String] {
        [Names.Header.router: "r", Names.Header.lines: String(first)]
    }

    @Test("lines at or below the last applied from a router are dropped, however they were batched")
    func dedup() throws {
        var admission = Admission()
        let body = Array("a\nb\nc\n".utf8)
        var result = try admission.admit(headers: Self.headers(1), body: body, limit: 1 << 20)
        #expect(result.lines == body && result.dropped == 0)
        // A restarted router re-sends lines 2..5 in one message: 2 and 3 were applied.
        result = try admission.admit(headers: Self.headers(2), body: Array("b\nc\nd\ne".utf8), limit: 1 << 20)
        #expect(String(decoding: result.lines, as: UTF8.self) == "d\ne\n")
        #expect(result.dropped == 2)
        result = try admission.admit(headers: Self.headers(1), body: Array("a\nb\n".utf8), limit: 1 << 20)
        #expect(result.lines.isEmpty && result.dropped == 2)
        #expect(admission.routers == ["r": 5])
        // Another router's numbers are its own.
        result = try admission.admit(
            headers: [Names.Header.router: "s", Names.Header.lines: "1"], body: body, limit: 1 << 20)
        #expect(result.lines == body)
        // No router header: applied as it is.
        result = try admission.admit(headers: [:], body: body, limit: 1 << 20)
        #expect(result.lines == body)
    }

    @Test(
        "deflated bodies inflate; unknown encodings, garbage, cut or trailing bytes and bodies past the limit are refused"
    )
    func deflate() throws {
        var admission = Admission()
        let body = Array(String(repeating: "{\"cmd\":\"tick\",\"at\":1}\n", count: 1000).utf8)
        let deflated = Admission.deflate(body)
        let headers = [Names.Header.encoding: "deflate"]
        #expect(try admission.admit(headers: headers, body: deflated, limit: 1 << 20).lines == body)
        #expect(throws: Admission.Undecodable.self) {
            try admission.admit(headers: [Names.Header.encoding: "gzip"], body: deflated, limit: 1 << 20)
        }
        #expect(throws: Admission.Undecodable.self) {
            try admission.admit(headers: headers, body: Array("not deflate".utf8), limit: 1 << 20)
        }
        #expect(throws: Admission.Undecodable.self) {
            try admission.admit(headers: headers, body: Array(deflated.dropLast(3)), limit: 1 << 20)
        }
        #expect(throws: Admission.Undecodable.self) {
            try admission.admit(headers: headers, body: deflated + [1, 2], limit: 1 << 20)
        }
        #expect(throws: Admission.Undecodable.self) {
            try admission.admit(headers: headers, body: deflated, limit: body.count - 1)
        }
        #expect(try admission.admit(headers: headers, body: deflated, limit: body.count).lines == body)
    }
}
