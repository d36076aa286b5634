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
            JSONValue.writeString(text, to: &out) // the cluster's one JSON string writer
            return String(decoding: out, as: UTF8.self)
        case let raw as Raw: return raw.json
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

    /// A value written into the JSON as it is (an object).
    struct Raw {
        let json: String
    }

    /// A label value with `\`, `"` and line breaks escaped.
    public static func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Prometheus text of `values` (by name) in the table's order: metric `prefix +
    /// name` (`_total` for a counter) with its help and type, `labels` on every
    /// sample, a list as one sample per partition; info stats and missing values
    /// left out (a value absent from `values` too); `state` as one more gauge, labelled with the state.
    package static func prometheus(
        _ table: [Stat], _ values: [String: Any], prefix: String, labels: String,
        state: (String, String)? = nil
    ) -> String {
        var out: [String] = []
        for stat in table where stat.kind != .info {
            guard let value = values[stat.name], !(value is String) else { continue }
            let metric = prefix + stat.name + (stat.kind == .counter ? "_total" : "")
            out.append("# HELP \(metric) \(stat.help)")
            out.append("# TYPE \(metric) \(stat.kind == .counter ? "counter" : "gauge")")
            if let list = value as? [Int] {
                for (p, item) in list.enumerated() { out.append("\(metric){\(labels),partition=\"\(p)\"} \(item)") }
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

    /// One JSON object of `values` (by name) in the table's order; a missing value is null.
    package static func json(_ table: [Stat], _ values: [String: Any]) -> String {
        json(table.map { ($0.name, values[$0.name] as Any) })
    }
}

/// One line of a role's stats (``Router`` and ``Shard`` each have a table of
/// them): its JSON key, what it tells (the Prometheus help), its kind. The JSON,
/// the Prometheus text and every total are made from the table.
package struct Stat: Sendable {
    package enum Kind: Sendable {
        /// Only grows: `_total` in Prometheus.
        case counter
        /// Goes up and down.
        case gauge
        /// In the JSON only (a name, a text, an object, a label).
        case info
    }

    package let name: String
    package let kind: Kind
    package let help: String

    package init(_ name: String, _ kind: Kind, _ help: String) {
        self.name = name
        self.kind = kind
        self.help = help
    }
}
