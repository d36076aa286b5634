import Foundation
import NatsClient

/// Reads of a stream's stored messages by subject through the stream's leader
/// (`$JS.API.STREAM.MSG.GET`, which needs no direct gets on the stream): the
/// first message on a subject at or after a sequence.
public enum StreamReads {
    /// The first message of `stream` on `subject` at or after `sequence`; nil when
    /// there is none.
    public static func next(
        _ connection: NatsConnection, stream: String, subject: String, from sequence: UInt64,
        timeout: Int64
    ) throws -> StoredMessage? {
        let body = "{\"seq\":\(sequence),\"next_by_subj\":\(jsonString(subject))}"
        let reply = try connection.request(
            NatsMessage(subject: "$JS.API.STREAM.MSG.GET.\(stream)", data: Array(body.utf8)),
            timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: Data(reply.data)) as? [String: Any] else {
            throw StreamReadError(description: "an answer that is not an object")
        }
        if let error = object["error"] as? [String: Any] {
            let code = (error["err_code"] as? NSNumber)?.intValue ?? 0
            let status = (error["code"] as? NSNumber)?.intValue ?? 0
            if code == 10037 || status == 404 { return nil }
            throw StreamReadError(description: "stream \(stream): \(error["description"] ?? "error \(code)")")
        }
        guard let message = object["message"] as? [String: Any], let seq = (message["seq"] as? NSNumber)?.uint64Value
        else {
            throw StreamReadError(description: "an answer without a message")
        }
        let data = (message["data"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        let headerBytes = (message["hdrs"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        return StoredMessage(
            sequence: seq, subject: message["subject"] as? String ?? subject,
            headers: parseHeaders(headerBytes), data: data)
    }

    /// `NATS/1.0\r\nKey: Value\r\n...` as a dictionary (the last value of a key kept).
    static func parseHeaders(_ bytes: [UInt8]) -> [String: String] {
        var headers: [String: String] = [:]
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            var value = line[line.index(after: colon)...]
            while value.first == " " { value = value.dropFirst() }
            headers[key] = String(value)
        }
        return headers
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

public struct StreamReadError: Error, CustomStringConvertible {
    public let description: String
}
