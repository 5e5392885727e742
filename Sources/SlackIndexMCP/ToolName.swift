import MCP
import SlackIndex

/// The tools, their arguments and their definitions as `tools/list` gives them: the one place a tool's name,
/// schema and description live.
enum ToolName: String, CaseIterable, Sendable {
    case search
    case messagesAround = "messages_around"
    case history
    case thread
    case conversations
    case users
    case archiveFacts = "archive_facts"

    /// The argument names the tool takes (anything else is refused, with this list).
    var arguments: [String] {
        guard case .object(let schema) = definition.inputSchema, case .object(let properties)? = schema["properties"]
        else { return [] }
        return properties.keys.sorted()
    }

    /// The `limit` argument's default and bounds (the schema and the check both read them).
    var limit: (default: Int, range: ClosedRange<Int>) {
        switch self {
        case .search: (20, 1...100)
        case .messagesAround: (11, 1...200)
        case .history: (50, 1...500)
        case .thread: (100, 1...500)
        case .conversations: (50, 1...500)
        case .users: (20, 1...500)
        case .archiveFacts: (1, 1...1)
        }
    }

    var definition: Tool {
        Tool(
            name: rawValue, description: description, inputSchema: schema(properties, required: required),
            annotations: Tool.Annotations(readOnlyHint: true, openWorldHint: false))
    }

    private var description: String {
        switch self {
        case .search:
            """
            Search the Slack archive with Slack's query syntax: words, "exact phrases", -excluded, prefix*, \
            in:#channel, in:@user (a DM), from:@user, from:me, to:@user, with:@user, before:/after:/on:/during: \
            with a date, has:link, has:file, has:reaction, has:pin, is:thread. A word also finds its English forms \
            (deploy: deployed, deploying) unless exact is true. Each hit gives its conversation, author, date, \
            handle (e.g. #general/1714000000.000100: pass it to messages_around or thread), permalink and a \
            snippet with matches in **bold**. Answers end with how many more there are and the cursor for them.
            """
        case .messagesAround:
            """
            The messages around one message (a handle from search, or a permalink): what was said just before and \
            after it in its conversation, the message marked ▶. For a reply in a thread, the thread around it.
            """
        case .history:
            """
            A conversation's messages between two dates, oldest first (top-level messages and thread parents; \
            read a thread with the thread tool). With after, it starts there and pages forward; without, it gives \
            the newest page (before `before`, when given) and pages back. Each answer ends with a cursor for the \
            next page: send it with the same conversation, after and before.
            """
        case .thread:
            """
            A whole thread: the parent message and its replies in order. Name it by any of its messages (a handle \
            from search or a permalink), or by conversation and ts.
            """
        case .conversations:
            """
            The conversations you can see (public channels; private channels, DMs and group DMs you are in), with \
            their ids, kinds, member counts, message counts and topics. Filter by name (part of it, any case) and \
            by kind.
            """
        case .users:
            """
            Find people by name, fuzzily: handle, display name or real name, whole, its start, or close spellings \
            (jon finds john). Gives each one's handle (for from:@handle), id, names and time zone.
            """
        case .archiveFacts:
            """
            What the archive holds for you: its workspaces, the conversations you can see by kind, their message \
            count, the dates of the oldest and newest message, the number of people, and your user and time zone \
            (dates in queries are days there).
            """
        }
    }

    private var required: [String] {
        switch self {
        case .search: ["query"]
        case .history: ["conversation"]
        case .messagesAround, .thread: []
        case .conversations, .users, .archiveFacts: []
        }
    }

    private var properties: [String: Value] {
        let format = property(
            "string", "compact (default): one line of text a message, cut at 300 characters; full: whole messages "
                + "with reactions, files and permalinks.", choices: MessageFormat.names)
        let conversation = property("string", "#name, name, the start of a unique name, or an id (C0123…).")
        let located = [
            "message": property(
                "string", "The message: its handle from search (#general/1714000000.000100), or a Slack permalink. "
                    + "Or give conversation and ts instead."),
            "conversation": conversation,
            "ts": property("string", "With conversation: the message's Slack ts (1714000000.000100)."),
            "format": format,
        ]
        let cursor = property("string", "The cursor a previous answer ended with; send the same other arguments.")
        switch self {
        case .search:
            return [
                "query": property("string", "The query in Slack's syntax, e.g. deploy in:#ops after:2024-05-01."),
                "sort": property(
                    "string", "relevance (default: best matches, recent ones first among equals), newest or oldest.",
                    choices: SearchSort.allCases.map(\.rawValue)),
                "limit": integer("Hits per answer."),
                "in": property("string", "Same as in:NAME in the query: a conversation."),
                "from": property("string", "Same as from:NAME in the query: a person (handle, name or me)."),
                "after": property("string", "Same as after:DATE: messages after this day (2024-05-01, may, last week)."),
                "before": property("string", "Same as before:DATE: messages before this day."),
                "exact": property("boolean", "Match words exactly, without their English forms (default false)."),
                "cursor": cursor, "format": format,
            ]
        case .messagesAround:
            return located.merging(["limit": integer("Messages in all, the target in the middle.")]) { a, _ in a }
        case .history:
            return [
                "conversation": conversation,
                "after": property("string", "From this date or time on (2024-05-01, 2024-05-01T14:30, may, last week)."),
                "before": property("string", "Before this date or time."),
                "limit": integer("Messages per answer."), "cursor": cursor, "format": format,
            ]
        case .thread:
            return located.merging(["limit": integer("Messages per answer."), "cursor": cursor]) { a, _ in a }
        case .conversations:
            return [
                "name": property("string", "Part of the name, any case (gen finds #general)."),
                "kind": property(
                    "string", "Only this kind: channel (public), private, mpim (group DM) or dm.",
                    choices: ConversationKind.allCases.map(\.rawValue)),
                "limit": integer("Conversations per answer."), "cursor": cursor,
            ]
        case .users:
            return [
                "name": property("string", "A name, handle or id, or part of one; leave out to list everyone."),
                "limit": integer("People per answer."),
                "cursor": cursor,
            ]
        case .archiveFacts:
            return [:]
        }
    }

    private func schema(_ properties: [String: Value], required: [String]) -> Value {
        var object: [String: Value] = [
            "type": "object", "properties": .object(properties), "additionalProperties": false,
        ]
        if !required.isEmpty { object["required"] = .array(required.map { .string($0) }) }
        return .object(object)
    }

    private func property(_ type: String, _ description: String, choices: [String] = []) -> Value {
        var object: [String: Value] = ["type": .string(type), "description": .string(description)]
        if !choices.isEmpty { object["enum"] = .array(choices.map { .string($0) }) }
        return .object(object)
    }

    /// The `limit` argument's schema, from `limit`.
    private func integer(_ description: String) -> Value {
        .object([
            "type": "integer", "description": .string(description.dropLast() + " (default \(limit.default))."),
            "minimum": .int(limit.range.lowerBound), "maximum": .int(limit.range.upperBound),
        ])
    }
}
