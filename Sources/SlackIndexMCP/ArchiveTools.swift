import Foundation
import MCP
import SlackIndex

/// Whose view of the archive the server gives.
public enum MCPViewer: Sendable, Hashable {
    /// An archive user (by id): public channels, and the private channels, DMs and group DMs they are in.
    case user(String)
    /// A `slackindex token` token: exactly what `serve` lets it see (an admin token sees everything), checked
    /// again on every call, so a revoked token stops working at once.
    case token(String)
}

/// The archive's tools for an assistant, answered for one viewer: search, a message's surroundings, a
/// conversation's history, a thread, conversations, users and the archive's facts.
///
/// Access is `serve`'s, through the same store operations (`Archive.visibleConversation(id:to:)`,
/// `visibleConversationRowIDs(to:)`, `visibleConversations(to:…)`): a conversation the viewer may not see is "not
/// found" by name, id, handle, permalink, cursor or thread ts, its closest names are never suggested, and
/// search never returns its messages. Independent of the MCP transport (`MCPServer` puts it on stdio), so tests
/// and the fuzz target call it directly.
public final class ArchiveTools: Sendable {
    /// The roles the tools read: conversations, users and what the viewer sees; timelines; tokens.
    package let archive: any Directory & Timelines & TokenStore
    public let viewer: MCPViewer
    let engine: SearchEngine
    let timeline: Timeline
    /// "Now" for relative dates (`yesterday`); the clock unless a test fixes it.
    let now: @Sendable () -> Date

    public init(archive: Archive, viewer: MCPViewer, now: @escaping @Sendable () -> Date = { Date() }) {
        self.archive = archive.store
        self.viewer = viewer
        engine = SearchEngine(archive: archive)
        timeline = Timeline(archive: archive, maxPages: 256, maxBytes: 16 << 20)
        self.now = now
    }

    /// The tools, with their JSON schemas and descriptions (`ArchiveTools+Schemas.swift`).
    public static var tools: [Tool] { ToolName.allCases.map(\.definition) }

    /// Runs one tool call and returns its answer as text.
    ///
    /// - Throws: `ToolError` for anything the caller can fix (its message says how); a store error for a damaged
    ///   archive.
    /// - Complexity: that of the tool's query (each states its own).
    public func call(_ name: String, arguments: [String: Value]?) throws -> String {
        guard let tool = ToolName(rawValue: name) else {
            throw ToolError.unknownTool(name, known: ToolName.allCases.map(\.rawValue))
        }
        let arguments = try ToolArguments(tool: name, values: arguments, accepted: tool.arguments)
        let token = try viewerToken()
        switch tool {
        case .search: return try search(arguments, token: token)
        case .messagesAround: return try messagesAround(arguments, token: token)
        case .history: return try history(arguments, token: token)
        case .thread: return try thread(arguments, token: token)
        case .conversations: return try conversations(arguments, token: token)
        case .users: return try users(arguments)
        case .archiveFacts: return try facts(token: token)
        }
    }

    /// The token record whose access rules apply: the viewer's user as a plain (not admin) token, or the
    /// presented token verified against the archive now.
    ///
    /// - Throws: `ToolError.revokedToken` when the archive no longer has the token.
    /// - Complexity: O(log n).
    func viewerToken() throws -> APIToken {
        switch viewer {
        case .user(let id): return APIToken(id: 0, userID: id, isAdmin: false, created: 0)
        case .token(let presented):
            guard let record = try archive.verifyToken(presented) else { throw ToolError.revokedToken }
            return record
        }
    }

    /// The viewer's time zone (the user's, else UTC): dates in arguments and answers are days there.
    func timeZone(_ token: APIToken) throws -> TimeZone {
        try archive.archivedUser(id: token.userID)?.timeZone.flatMap(TimeZone.init(identifier:))
            ?? TimeZone(identifier: "UTC") ?? .current
    }

    /// The conversation `reference` names (an id, `#name`, name, `<#C1|name>`, or the unique start of a name)
    /// among those `token` may see.
    ///
    /// - Throws: `ToolError.unknownConversation` with the closest visible names, or `.ambiguousConversation`.
    /// - Complexity: O(log n) by id; O(c) over the c visible conversations by name.
    func conversation(_ reference: String, token: APIToken) throws -> Conversation {
        var name = reference.trimmingCharacters(in: .whitespaces)
        if name.hasPrefix("<#"), name.hasSuffix(">") {
            name = String(name.dropFirst(2).dropLast().prefix { $0 != "|" })
        }
        if name.hasPrefix("#") { name.removeFirst() }
        if let listing = try archive.visibleConversation(id: name, to: token) { return listing.conversation }
        let visible = try allVisibleConversations(token)
        var found = visible.filter { $0.name == name }
        if found.isEmpty { found = visible.filter { $0.name.lowercased() == name.lowercased() } }
        if found.isEmpty { found = visible.filter { ClosestNames.startsWith($0.name, name) } }
        if found.count == 1 { return found[0] }
        guard found.isEmpty else {
            let candidates = found.prefix(10).map { "\($0.displayName) (\($0.id))" }
            throw ToolError.ambiguousConversation(reference, candidates: candidates)
        }
        throw ToolError.unknownConversation(
            reference, closest: ClosestNames.closest(to: name, among: visible.map(\.displayName)))
    }

    /// Every conversation `token` may see, in id order.
    ///
    /// - Complexity: O(c × members).
    func allVisibleConversations(_ token: APIToken) throws -> [Conversation] {
        try archive.visibleConversations(
            to: token, kinds: Set(ConversationKind.allCases), excludeArchived: false, after: nil, limit: Int.max
        ).map(\.conversation)
    }

    /// The conversation and message a point names (a handle, a permalink), or `conversation` and `ts` given
    /// apart; both must be visible.
    ///
    /// - Throws: `ToolError.missing` without a message, `.unknownConversation`, `.messageNotFound`.
    /// - Complexity: O(log n) plus `conversation(_:token:)`.
    func message(_ arguments: ToolArguments, token: APIToken, zone: TimeZone) throws
        -> (Conversation, SlackIndex.Message)
    {
        let example = "\"#general/1714000000.000100\" (a handle from search) or a permalink"
        let point = try arguments.point("message", timeZone: zone, now: now())
        let reference = try point?.conversationID ?? arguments.string("conversation")
        guard let reference else { throw ToolError.missing(argument: "message", example: example) }
        let target = try conversation(reference, token: token)
        let ts = try point?.ts ?? arguments.string("ts")
        guard let ts else { throw ToolError.missing(argument: "message", example: example) }
        guard let key = SlackTimestamp.parseKey(ts), let found = try archive.message(conversation: target, tsKey: key)
        else { throw ToolError.messageNotFound(conversation: target.displayName, ts: ts) }
        return (target, found)
    }

    /// The page a cursor continues, when the cursor is one of ours for a conversation `token` may see.
    ///
    /// - Throws: `ToolError.badCursor` (an unreadable cursor, or one for a conversation the viewer may not see:
    ///   the same answer, so cursors cannot probe for private conversations).
    func cursor(_ text: String, token: APIToken) throws -> (TimelineCursor, Conversation) {
        guard let cursor = try? TimelineCursor(parsing: text),
            let listing = try archive.visibleConversation(id: cursor.conversationID, to: token)
        else { throw ToolError.badCursor(argument: "cursor") }
        return (cursor, listing.conversation)
    }

    /// `text` reading details for the full format.
    func messageText(_ messages: [SlackIndex.Message], format: MessageFormat, zone: TimeZone) throws -> MessageText {
        let details = format == .full ? try archive.details(of: messages.map(\.rowID)) : [:]
        return MessageText(format: format, timeZone: zone, details: details)
    }
}
