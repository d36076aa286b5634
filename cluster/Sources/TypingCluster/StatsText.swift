import Foundation

/// Stats as JSON (fields in the order given) and as Prometheus text.
public enum StatsText {
    /// One JSON object of `fields`, in their order.
    public static func json(_ fields: [(String, Any)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\(value($0.1))" }.joined(separator: ",") + "}"
    }

    static func value(_ value: Any) -> String {
        switch value {
        case let text as String:
            var out: [UInt8] = []
            JSONValue.writeString(text, to: &out)   // the cluster's one JSON string writer
            return String(decoding: out, as: UTF8.self)
        case let list as [Int]: return "[" + list.map(String.init).joined(separator: ",") + "]"
        case let number as Int: return String(number)
        case let number as Int64: return String(number)
        case let number as UInt64: return String(number)
        case let number as Double: return number.isFinite ? String(number) : "null"
        case let flag as Bool: return flag ? "true" : "false"
        case .none as Any?: return "null"
        default: return "null"
        }
    }

    /// A label value with `\`, `"` and line breaks escaped.
    public static func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Prometheus text: metric `prefix + name` (`_total` for counters), `labels` on
    /// every sample, a list as one sample per partition.
    public static func prometheus(_ fields: [(String, Any)], prefix: String, labels: String, counters: Set<String>,
                                  skip: Set<String>, state: (String, String)?) -> String {
        var out: [String] = []
        for (key, value) in fields where !skip.contains(key) {
            let metric = prefix + key + (counters.contains(key) ? "_total" : "")
            out.append("# TYPE \(metric) \(counters.contains(key) ? "counter" : "gauge")")
            if let list = value as? [Int] {
                for (p, item) in list.enumerated() { out.append("\(metric){\(labels),partition=\"\(p)\"} \(item)") }
            } else if value is String {
                continue
            } else {
                out.append("\(metric){\(labels)} \(Self.value(value))")
            }
        }
        if let (metric, state) = state {
            out.append("# TYPE \(metric) gauge")
            out.append("\(metric){\(labels),state=\"\(escapeLabel(state))\"} 1")
        }
        return out.joined(separator: "\n") + "\n"
    }
}
