import Foundation
import GRDB

// Cold reads (listings, names, lookups) select named columns and decode rows by name, GRDB's recommended record
// practice: adding a column cannot shift another. Positional reads stay only in the two hot paths, the bulk writer
// (`MessageWriter`) and timeline pages (`TimelineRows`), where they were measured.

/// The `user` columns a `User` is read from.
enum UserColumns {
    static let list = "id, handle, real_name, display_name, is_bot, is_deleted, is_placeholder"

    static func user(_ row: Row) -> User {
        User(
            id: row["id"], handle: row["handle"], realName: row["real_name"], displayName: row["display_name"],
            isBot: row["is_bot"], isDeleted: row["is_deleted"], isPlaceholder: row["is_placeholder"])
    }
}

/// The `conversation` columns (table alias `c`) a `Conversation` is read from.
enum ConversationColumns {
    static let list = """
        c.id, c.slack_id, c.kind, c.name, c.topic, c.purpose, c.is_archived, c.members, c.created,
        (SELECT domain FROM workspace w WHERE w.id = c.workspace_id) AS workspace_domain,
        (SELECT team_id FROM workspace w WHERE w.id = c.workspace_id) AS workspace_team,
        \(WorkspaceLabel.sql("c")) AS workspace_label
        """

    static func conversation(_ row: Row) -> Conversation {
        let membersJSON: String = row["members"]
        let members = JSONText.strings(membersJSON) ?? []
        return Conversation(
            rowID: row["id"], id: row["slack_id"], kind: ConversationKind(rawValue: row["kind"]) ?? .channel,
            name: row["name"], topic: row["topic"], purpose: row["purpose"], isArchived: row["is_archived"],
            members: members, workspaceDomain: row["workspace_domain"], workspace: row["workspace_label"],
            workspaceID: row["workspace_team"])
    }
}

/// The name of a conversation's workspace where another workspace in the archive holds a conversation of the same
/// name (two exports' `#general`): its Slack domain, or its team id when the domain is unknown or shared. NULL
/// otherwise, and for conversations of no known workspace (those from dumps and sync pages).
enum WorkspaceLabel {
    /// The label of the conversation aliased `alias`, as an SQL expression.
    /// - Complexity: O(w) over the workspaces (one or a few) when there is one; else O(c) over the conversations
    ///   (no index on names; an archive holds thousands at most). The timeline asks once per page.
    static func sql(_ alias: String) -> String {
        """
        (SELECT CASE WHEN w.domain IS NOT NULL AND w.domain <> ''
                AND NOT EXISTS (SELECT 1 FROM workspace x WHERE x.domain = w.domain AND x.id <> w.id)
            THEN w.domain ELSE w.team_id END
         FROM workspace w
         WHERE w.id = \(alias).workspace_id
            AND EXISTS (SELECT 1 FROM workspace other WHERE other.id <> w.id)
            AND EXISTS (SELECT 1 FROM conversation o WHERE o.name = \(alias).name
                AND o.workspace_id IS NOT \(alias).workspace_id))
        """
    }

    /// Splits `acme/#general` (or `acme/general`) into a workspace (its domain or team id) and a conversation
    /// name; nil when the text holds no `/` with something on both sides.
    static func split(_ reference: String) -> (workspace: String, name: String)? {
        guard let slash = reference.firstIndex(of: "/") else { return nil }
        let workspace = String(reference[..<slash])
        var name = String(reference[reference.index(after: slash)...])
        if name.hasPrefix("#") { name.removeFirst() }
        guard !workspace.isEmpty, !name.isEmpty else { return nil }
        return (workspace, name)
    }
}

/// `message.search_text` holds the indexed text only where it differs from `text`: the two were equal in 74% of
/// the generated 1M messages (85 MiB). An empty `search_text` means "the same as `text`"; a search text that is
/// empty although `text` is not is stored as one space (it indexes to the same nothing).
package enum SearchTextColumn {
    /// Whether mrkdwn text holds markup or entities (`<`, `&`): the only text `MrkdwnText.normalize` rewrites, so a
    /// text without them is its own search text, and a page shows `text` for it (`TimelineRows.showsSearchText`).
    package static func holdsMarkup(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, Int32(UInt8(ascii: "<")), bytes.count) != nil
            || memchr(base, Int32(UInt8(ascii: "&")), bytes.count) != nil
    }

    /// What is stored for `searchText` beside `text`.
    static func stored(_ searchText: String, text: String) -> String {
        if sameBytes(searchText, text) { return "" }
        return searchText.isEmpty ? " " : searchText
    }

    /// Byte equality: `==` compares by canonical equivalence (the stored text must be exact), and `elementsEqual`
    /// over the UTF-8 views cost 1.5 s of CPU per 1M messages where memcmp costs nothing measurable.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard let left = x.baseAddress, let right = y.baseAddress else { return x.count == y.count }
                return memcmp(left, right, x.count) == 0
            }
        }
    }

    /// The search text from the stored columns.
    static func value(stored: String, text: String) -> String { stored.isEmpty ? text : stored }

    /// The search text of the row aliased `alias`, as an SQL expression.
    static func sql(_ alias: String) -> String {
        "CASE WHEN \(alias).search_text = '' THEN \(alias).text ELSE \(alias).search_text END"
    }
}
