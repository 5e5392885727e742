import Foundation
import MCP
import SlackIndex

/// Resources (conversations and threads a client can attach) and prompts, answered through the tools, so their
/// access rules and errors are the tools'.
extension ArchiveTools {
    /// Conversations listed a `resources/list` page.
    static let resourcePage = 100

    /// The URI templates: a conversation's newest messages, and a thread.
    public static let resourceTemplates = [
        Resource.Template(
            uriTemplate: "slackindex://conversation/{id}", name: "conversation",
            description: "A conversation's newest 50 messages, oldest first (id as the conversations tool gives it).",
            mimeType: "text/plain"),
        Resource.Template(
            uriTemplate: "slackindex://thread/{conversation_id}/{ts}", name: "thread",
            description: "A whole thread, by the conversation's id and the ts of any of its messages.",
            mimeType: "text/plain"),
    ]

    /// A page of the conversations the viewer sees, as resources.
    ///
    /// - Complexity: O(c × members).
    public func resources(cursor: String?) throws -> (resources: [Resource], next: String?) {
        let after = try cursor.map { try OpaqueCursor.parts($0, kind: "r1").joined() }
        let visible = try allVisibleConversations(try viewerToken()).filter { c in after.map { c.id > $0 } ?? true }
        let page = visible.prefix(ArchiveTools.resourcePage)
        let resources = page.map { c in
            Resource(
                name: c.displayName, uri: "slackindex://conversation/\(c.id)",
                description: "\(c.kind.rawValue)\(c.topic.map { ": \($0)" } ?? "")", mimeType: "text/plain")
        }
        let next = visible.count > page.count ? page.last.map { OpaqueCursor.make(["r1", $0.id]) } : nil
        return (resources, next)
    }

    /// A resource's text: `slackindex://conversation/ID` or `slackindex://thread/ID/TS`.
    ///
    /// - Throws: `ToolError.unknownResource` for another URI; the tools' errors for a conversation or message
    ///   the viewer may not see.
    public func read(uri: String) throws -> String {
        let scheme = "slackindex://"
        let parts = uri.hasPrefix(scheme) ? uri.dropFirst(scheme.count).split(separator: "/").map(String.init) : []
        switch (parts.first ?? "", parts.count) {
        case ("conversation", 2):
            return try call(ToolName.history.rawValue, arguments: ["conversation": .string(parts[1])])
        case ("thread", 3):
            return try call(
                ToolName.thread.rawValue,
                arguments: ["message": .string("\(parts[1])/\(parts[2])"), "format": "full"])
        default:
            throw ToolError.unknownResource(uri)
        }
    }

    /// The prompts: summarise a conversation between dates; find what was decided about something.
    public static let prompts = [
        Prompt(
            name: PromptName.summarise.rawValue,
            description: "Summarise a conversation between two dates: topics, decisions, open questions.",
            arguments: [
                .init(name: "conversation", description: "#name or id", required: true),
                .init(name: "after", description: "From this date (2024-05-01, last week…)", required: false),
                .init(name: "before", description: "Before this date", required: false),
            ]),
        Prompt(
            name: PromptName.decision.rawValue,
            description: "Find what was decided about a subject, with the messages that show it.",
            arguments: [
                .init(name: "subject", description: "What the decision was about", required: true),
                .init(name: "in", description: "Only in this conversation", required: false),
            ]),
    ]

    enum PromptName: String, CaseIterable {
        case summarise = "summarise_conversation"
        case decision = "find_decision"
    }

    /// A prompt's message, its arguments checked first (the conversation must be one the viewer sees, dates
    /// must read), so a bad argument is an error now rather than a failed tool call later.
    ///
    /// - Throws: `ToolError.unknownPrompt`, `.missing`, `.badDate`, `.unknownConversation`.
    public func prompt(_ name: String, arguments: [String: String]?) throws -> String {
        guard let prompt = PromptName(rawValue: name) else {
            throw ToolError.unknownPrompt(name, known: PromptName.allCases.map(\.rawValue))
        }
        let token = try viewerToken()
        let accepted = ArchiveTools.prompts.first { $0.name == name }?.arguments?.map(\.name) ?? []
        let values = (arguments ?? [:]).mapValues { Value.string($0) }
        let checked = try ToolArguments(tool: name, values: values, accepted: accepted)
        let today = Day.today(in: try timeZone(token), now: now())
        switch prompt {
        case .summarise:
            let target = try conversation(checked.required("conversation", example: "\"#general\""), token: token)
            let after = try checked.date("after", today: today)
            let before = try checked.date("before", today: today)
            let range = [after.map { "from \($0)" }, before.map { "before \($0)" }].compactMap { $0 }
            return """
                Summarise \(target.displayName) (\(target.id))\(range.isEmpty ? "" : " " + range.joined(separator: ", ")). \
                Read it with the history tool (conversation "\(target.id)"\(after.map { ", after \"\($0)\"" } ?? "")\
                \(before.map { ", before \"\($0)\"" } ?? "")), following its cursor to the end of the range, and \
                open the threads that look important with the thread tool. Then give the main topics, the \
                decisions made, and the questions left open, each with the handle of the message it comes from.
                """
        case .decision:
            let subject = try checked.required("subject", example: "\"the database migration\"")
            let scope = try checked.string("in").map { " in:\(try conversation($0, token: token).id)" } ?? ""
            return """
                Find what was decided about \(subject). Search the archive with the search tool: first the \
                subject's words\(scope), then with words such as decided, agreed, "go with", approved, final; \
                read the promising hits' threads (thread tool) and surroundings (messages_around). Say what was \
                decided, by whom and when, quoting the deciding messages with their permalinks; if it changed \
                later, give the latest decision and how it got there. If nothing was decided, say so.
                """
        }
    }
}
