import Foundation
import SlackIndex

/// A list method's cursor: the last id of the previous page (keyset), opaque to clients (URL-safe base64).
enum ListCursor {
    static func make(_ list: String, after id: String) -> String {
        Data("v1 \(list) \(id)".utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The id a cursor continues after; nil for no cursor.
    ///
    /// - Throws: `invalid_cursor` for text not made by `make` for this list.
    static func parse(_ text: String?, list: String) throws -> String? {
        guard let text else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { throw APIFailure.invalidCursor }
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[0] == "v1", parts[1] == list else { throw APIFailure.invalidCursor }
        return parts[2]
    }
}

extension SlackAPI {
    /// `auth.test`: who the token is.
    ///
    /// - Complexity: O(log n).
    func authTest(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let workspace = try archive.workspace()
        let user = try archive.archivedUser(id: request.token.userID)
        let domain = workspace?.domain.flatMap { $0.isEmpty ? nil : $0 }
        return [
            ("url", .string(domain.map { "https://\($0).slack.com/" } ?? "https://slack.com/")),
            ("team", .string(workspace?.name ?? domain ?? "")),
            ("user", .string(user?.user.handle ?? request.token.userID)),
            ("team_id", .string(workspace?.teamID ?? user?.teamID ?? "")),
            ("user_id", .string(request.token.userID)),
            ("is_enterprise_install", .bool(false)),
        ]
    }

    /// `users.list`: members in id order, `limit` a page (default and maximum 1000), cursor paging.
    ///
    /// - Complexity: O(log n + limit).
    func usersList(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let limit = try request.limit(default: 1000, maximum: 1000)
        let after = try ListCursor.parse(request.string("cursor"), list: "users")
        var users = try archive.usersPage(after: after, limit: limit + 1)
        let hasMore = users.count > limit
        if hasMore { users.removeLast() }
        let next = hasMore ? users.last.map { ListCursor.make("users", after: $0.user.id) } ?? "" : ""
        return [
            ("members", .array(users.map(SlackAPI.userObject))),
            ("cache_ts", .int(Int64(Date().timeIntervalSince1970))),
            ("response_metadata", .object([("next_cursor", .string(next))])),
        ]
    }

    /// `users.info`: one member.
    ///
    /// - Complexity: O(log n).
    func usersInfo(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let id = try request.required("user")
        guard let user = try archive.archivedUser(id: id) else { throw APIFailure(code: "user_not_found") }
        return [("user", SlackAPI.userObject(user))]
    }

    /// A Slack user object; a member the archive only knows from messages carries `"is_placeholder": true`
    /// (slackindex's extension, so that an archive synced from this one keeps it a placeholder).
    static func userObject(_ archived: ArchivedUser) -> JSONValue {
        let user = archived.user
        let placeholder: [(String, JSONValue)] = user.isPlaceholder ? [("is_placeholder", .bool(true))] : []
        return .object([
            ("id", .string(user.id)),
            ("team_id", .string(archived.teamID)),
            ("name", .string(user.handle)),
            ("deleted", .bool(user.isDeleted)),
            ("real_name", .string(user.realName ?? "")),
            ("tz", .string(archived.timeZone)),
            ("is_bot", .bool(user.isBot)),
            ("is_app_user", .bool(false)),
            (
                "profile",
                .object([
                    ("real_name", .string(user.realName ?? "")),
                    ("display_name", .string(user.displayName ?? "")),
                ])
            ),
        ] + placeholder)
    }
}
