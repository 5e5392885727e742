import Foundation
import MCP
import SlackIndex

/// One tool call's arguments, read and checked: every getter either returns a value the tool can use or throws a
/// `ToolError` that says what to send instead. Never traps, whatever the client sends (the `mcp-tools` fuzz target
/// holds it to that).
struct ToolArguments {
    let tool: String
    let values: [String: Value]

    /// - Throws: `ToolError.unknownArguments` for names the tool does not take (a misspelt `limt` would else be
    ///   ignored without a word).
    init(tool: String, values: [String: Value]?, accepted: [String]) throws {
        self.tool = tool
        self.values = values ?? [:]
        let unknown = self.values.keys.filter { !accepted.contains($0) }.sorted()
        guard unknown.isEmpty else { throw ToolError.unknownArguments(unknown, tool: tool, accepted: accepted) }
    }

    /// A string argument, nil when absent, null or empty (numbers are taken as their text).
    func string(_ name: String) throws -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let text)?:
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        case .int(let number)?: return String(number)
        case .double(let number)? where number.isFinite: return String(number)
        default: throw ToolError.wrongType(argument: name, expected: "a string")
        }
    }

    func required(_ name: String, example: String) throws -> String {
        guard let text = try string(name) else { throw ToolError.missing(argument: name, example: example) }
        return text
    }

    /// An integer in `range`, `defaultValue` when absent; a whole number sent as a double or a string is taken.
    func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        let number: Int
        switch values[name] {
        case nil, .null?: return defaultValue
        case .int(let value)?: number = value
        case .double(let value)? where value.rounded() == value && abs(value) < 1e15: number = Int(value)
        case .string(let text)? where Int(text.trimmingCharacters(in: .whitespaces)) != nil:
            number = Int(text.trimmingCharacters(in: .whitespaces)) ?? defaultValue
        default: throw ToolError.wrongType(argument: name, expected: "a whole number")
        }
        guard range.contains(number) else { throw ToolError.outOfRange(argument: name, value: number, range: range) }
        return number
    }

    /// The tool's `limit` (`ToolName.limit`).
    func limit(_ tool: ToolName) throws -> Int {
        try int("limit", default: tool.limit.default, range: tool.limit.range)
    }

    /// A boolean, `defaultValue` when absent (`"true"`/`"false"` strings are taken too).
    func bool(_ name: String, default defaultValue: Bool) throws -> Bool {
        switch values[name] {
        case nil, .null?: return defaultValue
        case .bool(let value)?: return value
        case .string(let text)? where ["true", "false"].contains(text.lowercased()): return text.lowercased() == "true"
        default: throw ToolError.wrongType(argument: name, expected: "true or false")
        }
    }

    /// One of `choices` (case ignored), `defaultValue` when absent.
    func choice(_ name: String, _ choices: [String], default defaultValue: String) throws -> String {
        guard let text = try string(name)?.lowercased() else { return defaultValue }
        guard choices.contains(text) else { throw ToolError.notOneOf(argument: name, value: text, choices: choices) }
        return text
    }

    /// A date as `search` reads it (`2024-05-01`, `may`, `last week`…), checked; nil when absent.
    func date(_ name: String, today: Day) throws -> String? {
        guard let text = try string(name) else { return nil }
        guard DateExpression.parse(text, today: today) != nil else {
            throw ToolError.badDate(argument: name, value: text)
        }
        return text
    }

    /// A point in time or a message (a handle, a permalink, a ts, a date), in `timeZone`; nil when absent.
    func point(_ name: String, timeZone: TimeZone, now: Date) throws -> TimelinePoint? {
        guard let text = try string(name) else { return nil }
        guard let point = TimelinePoint.parse(text, timeZone: timeZone, now: now) else {
            throw ToolError.badPoint(argument: name, value: text)
        }
        return point
    }

    /// `format`: compact (one line a message, cut) or full (whole text, reactions, files).
    func format() throws -> MessageFormat {
        MessageFormat(rawValue: try choice("format", MessageFormat.names, default: "compact")) ?? .compact
    }
}
