/// A JSON document built in the order it is written, with a way to splice in JSON text as is.
///
/// The API answers with messages exactly as the archive stores them (`message.raw`): `.raw` embeds that text
/// without decoding and re-encoding it, so a client gets the bytes Slack gave. Keys keep their written order.
import SlackIndex

enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// Already serialized JSON (must be one valid value).
    case raw(String)

    static func int(_ value: Int) -> JSONValue { .int(Int64(value)) }

    /// `value` or `null`.
    static func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }

    /// The serialized document (UTF-8 JSON, no insignificant whitespace).
    ///
    /// - Complexity: O(n) in the output's length.
    var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? String(value) : "0"
        case .string(let value): JSONText.appendQuoted(value, to: &out)
        case .raw(let text): out += text
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                JSONText.appendQuoted(key, to: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }
}
