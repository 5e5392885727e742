import ArgumentParser
import Foundation
import SlackIndex

struct ConversationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conversations",
        abstract: "List the archive's conversations: kind, members, messages, first and last date, sync state.",
        discussion: """
            The names listed are what history, thread, stats and search's in: take. Group DMs are named by \
            their members; where two workspaces in the archive share a name it reads acme/#general. \
            --workspace lists one workspace's; --json lines carry the workspace's team id (workspace_id).

            Exit status: 0 when something is listed, 1 when nothing matches.

            Examples:
              slackindex conversations
              slackindex ls gen --kind channel
              slackindex conversations --kind dm --json
              slackindex conversations --workspace globex
            """,
        aliases: ["ls"])

    @OptionGroup var global: GlobalOptions
    @OptionGroup var workspace: WorkspaceOption

    @Argument(help: "Only conversations whose name or id contains this (case and accents ignored).")
    var filter: String?

    @Option(help: "Only this kind: channel, private, dm or mpim.")
    var kind: [ConversationKind] = []

    @Flag(help: "One JSON object per conversation.")
    var json = false

    @Option(help: ArgumentHelp("Time zone for dates (default: the system's).", valueName: "zone"))
    var tz: String?

    func validate() throws {
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("--tz '\(tz)' is not a time zone; use a name such as Europe/Paris or UTC.")
        }
    }

    func run() throws {
        let archive = try global.openArchive(.readOnly)
        let wanted = filter.map(Self.folded)
        let inWorkspace = try workspace.filter(in: archive)?.conversations
        let rows = try archive.store.conversationSummaries().filter { row in
            (kind.isEmpty || kind.contains(row.conversation.kind))
                && (inWorkspace?.contains(row.conversation.rowID) ?? true)
                && (wanted.map { want in
                    [row.conversation.name, row.conversation.displayName].contains { Self.folded($0).contains(want) }
                        || row.conversation.id.lowercased().contains(want)
                } ?? true)
        }
        let zone = tz.flatMap(TimeZone.init(identifier:)) ?? .current
        if json {
            for row in rows { Output.json(ConversationJSON(row)) }
        } else {
            printTable(rows, timeZone: zone)
        }
        if rows.isEmpty {
            let place = workspace.workspace.map { " in the workspace \($0)" } ?? " in the archive"
            if !json { Output.error("No conversations" + (filter.map { " match '\($0)'" } ?? place) + ".") }
            throw ExitCode(ExitStatus.failure)
        }
    }

    private func printTable(_ rows: [ConversationSummary], timeZone: TimeZone) {
        let day = { (seconds: Int64?) in seconds.map { String(Output.localTime($0, timeZone: timeZone).prefix(10)) } ?? "-" }
        let table = rows.map { row in
            [
                row.conversation.kind.rawValue, Output.oneLine(row.conversation.displayName, width: 40), row.conversation.id,
                Output.count(row.conversation.members.count), Output.count(row.messages), day(row.firstSeconds),
                day(row.lastSeconds), Self.syncState(row),
            ]
        }
        let header = ["KIND", "CONVERSATION", "ID", "MEMBERS", "MESSAGES", "FIRST", "LAST", "SYNC"]
        Output.table(header: header, rows: table, rightAligned: [3, 4])
    }

    static func syncState(_ row: ConversationSummary) -> String {
        if row.syncInterrupted { return "interrupted (sync resumes)" }
        guard let synced = row.syncedTS, let key = SlackTimestamp.parseKey(synced) else { return "not synced" }
        return "synced to " + Output.localTime(key / 1_000_000)
    }

    static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .trimmingCharacters(in: CharacterSet(charactersIn: "#@"))
    }
}

extension ConversationKind: ExpressibleByArgument {}

/// A conversation in `conversations --json`.
struct ConversationJSON: Encodable {
    var id: String
    var name: String
    var kind: String
    var members: Int
    var messages: Int
    var first: String?
    var last: String?
    var syncedTS: String?
    var syncInterrupted: Bool
    var isArchived: Bool
    /// The workspace, where another one in the archive holds the same name.
    var workspace: String?
    /// The workspace's team id, when known (left out otherwise).
    var workspaceID: String?

    init(_ row: ConversationSummary) {
        id = row.conversation.id
        name = row.conversation.displayName
        kind = row.conversation.kind.rawValue
        members = row.conversation.members.count
        messages = row.messages
        first = row.firstSeconds.map { Output.isoTime($0, timeZone: Self.utc) }
        last = row.lastSeconds.map { Output.isoTime($0, timeZone: Self.utc) }
        syncedTS = row.syncedTS
        syncInterrupted = row.syncInterrupted
        isArchived = row.conversation.isArchived
        workspace = row.conversation.workspace
        workspaceID = row.conversation.workspaceID
    }

    private static let utc = TimeZone(identifier: "UTC") ?? .current

    private enum CodingKeys: String, CodingKey {
        case id, name, kind, members, messages, first, last, workspace, isArchived = "is_archived"
        case workspaceID = "workspace_id"
        case syncedTS = "synced_ts", syncInterrupted = "sync_interrupted"
    }
}
