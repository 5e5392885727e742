import SlackIndex

/// Why a tool call, resource or prompt could not be answered; `description` is the message the assistant reads
/// (and shows its person), so each says what was wrong and what to send instead.
///
/// Never names a conversation the viewer may not see: a hidden conversation is "not found", as in `serve`.
public enum ToolError: Error, CustomStringConvertible, Sendable {
    case unknownTool(String, known: [String])
    case unknownArguments([String], tool: String, accepted: [String])
    case missing(argument: String, example: String)
    case wrongType(argument: String, expected: String)
    case outOfRange(argument: String, value: Int, range: ClosedRange<Int>)
    case notOneOf(argument: String, value: String, choices: [String])
    case badDate(argument: String, value: String)
    case badPoint(argument: String, value: String)
    case badCursor(argument: String)
    case cursorElsewhere(String)
    case unknownConversation(String, closest: [String])
    case ambiguousConversation(String, candidates: [String])
    case messageNotFound(conversation: String, ts: String)
    case noQuery
    case search(String)
    case revokedToken
    case unknownResource(String)
    case unknownPrompt(String, known: [String])

    public var description: String {
        switch self {
        case .unknownTool(let name, let known):
            "There is no tool '\(name)'. The tools are: \(known.joined(separator: ", "))."
        case .unknownArguments(let names, let tool, let accepted):
            "\(tool) does not take \(names.map { "'\($0)'" }.joined(separator: ", ")). It takes: "
                + accepted.joined(separator: ", ") + "."
        case .missing(let argument, let example):
            "'\(argument)' is required, e.g. \(example)."
        case .wrongType(let argument, let expected):
            "'\(argument)' must be \(expected)."
        case .outOfRange(let argument, let value, let range):
            "'\(argument)' is \(value); it must be between \(range.lowerBound) and \(range.upperBound)."
        case .notOneOf(let argument, let value, let choices):
            "'\(argument)' is '\(value)'; it must be one of \(choices.joined(separator: ", "))."
        case .badDate(let argument, let value):
            "'\(argument)' is '\(value)', which is not a date. Dates are \(DateExpression.acceptedForms)."
        case .badPoint(let argument, let value):
            "'\(argument)' is '\(value)', which names no message or time. Give a message's handle as search "
                + "prints it (#general/1714000000.000100), a permalink, a ts (1714000000.000100), or "
                + DateExpression.acceptedForms + "."
        case .badCursor(let argument):
            "'\(argument)' is not a cursor this server gave. Pass the cursor from the end of an earlier answer "
                + "exactly, or leave it out to start again."
        case .cursorElsewhere(let what):
            "That cursor continues \(what): send it with the same arguments as the answer that gave it."
        case .unknownConversation(let name, let closest):
            "No conversation called '\(name)' that you can see"
                + (closest.isEmpty
                    ? ". The conversations tool lists them."
                    : "; the closest names are \(closest.joined(separator: ", ")).")
        case .ambiguousConversation(let name, let candidates):
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids."
        case .messageNotFound(let conversation, let ts):
            "No message with ts \(ts) in \(conversation)."
        case .noQuery:
            "Nothing to search for: give words, a \"phrase\" or a filter such as in:#general or from:@alice."
        case .search(let message):
            message
        case .revokedToken:
            "The token this server was started with is no longer valid (revoked): restart it with another token."
        case .unknownResource(let uri):
            "No resource '\(uri)'. Resources are slackindex://conversation/ID and slackindex://thread/ID/TS for "
                + "conversations you can see."
        case .unknownPrompt(let name, let known):
            "There is no prompt '\(name)'. The prompts are: \(known.joined(separator: ", "))."
        }
    }
}
