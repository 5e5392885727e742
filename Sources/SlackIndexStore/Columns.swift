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
        (SELECT domain FROM workspace w WHERE w.id = c.workspace_id) AS workspace_domain
        """

    static func conversation(_ row: Row) -> Conversation {
        let membersJSON: String = row["members"]
        let members = JSONText.strings(membersJSON) ?? []
        return Conversation(
            rowID: row["id"], id: row["slack_id"], kind: ConversationKind(rawValue: row["kind"]) ?? .channel,
            name: row["name"], topic: row["topic"], purpose: row["purpose"], isArchived: row["is_archived"],
            members: members, workspaceDomain: row["workspace_domain"])
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
