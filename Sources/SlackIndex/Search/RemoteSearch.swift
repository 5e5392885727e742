import Foundation

/// A search service that answers Slack's `search.messages` (Slack itself, or another archive's `serve`).
public protocol RemoteSearch: Sendable {
    /// Runs `query` remotely, up to `limit` hits, in `sort` order.
    ///
    /// - Throws: ``RemoteError`` or `CancellationError`.
    func search(_ query: SearchQuery, limit: Int, sort: SearchSort) async throws -> RemotePage
}

/// One remote match, keyed like the archive on (conversation, ts).
public struct RemoteHit: Sendable, Equatable {
    public var conversationID: String
    public var conversationName: String?
    public var isPrivate: Bool
    public var ts: String
    public var userID: String?
    public var username: String?
    /// The message text without highlight markers.
    public var text: String
    /// A snippet around the first match, matches wrapped in U+E000 … U+E001 (our snippet form).
    public var snippet: String
    public var permalink: String?
    public var score: Double?

    public init(
        conversationID: String, conversationName: String?, isPrivate: Bool = false, ts: String, userID: String?,
        username: String?, text: String, snippet: String, permalink: String? = nil, score: Double? = nil
    ) {
        self.conversationID = conversationID
        self.conversationName = conversationName
        self.isPrivate = isPrivate
        self.ts = ts
        self.userID = userID
        self.username = username
        self.text = text
        self.snippet = snippet
        self.permalink = permalink
        self.score = score
    }
}

/// A remote answer: hits in the remote's order, and how many it says match in all.
public struct RemotePage: Sendable, Equatable {
    public var hits: [RemoteHit]
    public var total: Int

    public init(hits: [RemoteHit], total: Int) {
        self.hits = hits
        self.total = total
    }
}

/// Slack's `search.messages` through a ``SlackWebClient``: the parsed query rendered back into Slack syntax,
/// `count` ≤ 100 per page, cursor paging (`cursor=*`, then `next_cursor` from `response_metadata` or
/// `messages.pagination`) or page numbers when the service gives no cursor, until `limit`; highlights on.
public struct SlackRemoteSearch: RemoteSearch {
    public let client: SlackWebClient

    public init(client: SlackWebClient) {
        self.client = client
    }

    public func search(_ query: SearchQuery, limit: Int, sort: SearchSort) async throws -> RemotePage {
        let (sortField, direction) =
            switch sort {
            case .relevance: ("score", "desc")
            case .newest: ("timestamp", "desc")
            case .oldest: ("timestamp", "asc")
            }
        var hits: [RemoteHit] = []
        var total = 0
        var page = 1
        // Slack pages by cursor when asked with `cursor=*`; services that ignore it page by number.
        var cursor: String? = "*"
        let count = min(max(limit, 1), 100)
        while true {
            var parameters = [
                ("query", query.slackSyntax), ("count", String(count)), ("sort", sortField), ("sort_dir", direction),
                ("highlight", "true"),
            ]
            if let cursor { parameters.append(("cursor", cursor)) } else { parameters.append(("page", String(page))) }
            let body = try await client.call("search.messages", parameters)
            let answer: SearchAnswer
            do {
                answer = try JSONDecoder().decode(SearchAnswer.self, from: Data(body))
            } catch {
                throw RemoteError.api(method: "search.messages", error: "unreadable_answer")
            }
            let matches = answer.messages?.matches ?? []
            total = answer.messages?.total ?? answer.messages?.paging?.total ?? matches.count
            hits += matches.compactMap(Self.hit)
            let pages = answer.messages?.paging?.pages ?? 1
            let next = [answer.response_metadata?.next_cursor, answer.messages?.pagination?.next_cursor]
                .compactMap { $0 }.first { !$0.isEmpty }
            if hits.count >= limit || matches.isEmpty || (next == nil && page >= pages) { break }
            page += 1
            cursor = next
        }
        return RemotePage(hits: Array(hits.prefix(limit)), total: total)
    }

    static func hit(_ match: SearchAnswer.Match) -> RemoteHit? {
        guard let channel = match.channel?.id, let ts = match.ts, SlackTimestamp.parseKey(ts) != nil else { return nil }
        let highlighted = match.text ?? ""
        let plain = highlighted.replacingOccurrences(of: Highlight.start, with: "")
            .replacingOccurrences(of: Highlight.end, with: "")
        return RemoteHit(
            conversationID: channel, conversationName: match.channel?.name, isPrivate: match.channel?.is_private ?? false,
            ts: ts, userID: match.user, username: match.username, text: plain,
            snippet: SnippetBuilder.window(highlighted), permalink: match.permalink, score: match.score)
    }

    struct SearchAnswer: Decodable {
        struct Channel: Decodable {
            var id: String?
            var name: String?
            var is_private: Bool?
        }
        struct Match: Decodable {
            var channel: Channel?
            var ts: String?
            var user: String?
            var username: String?
            var text: String?
            var permalink: String?
            var score: Double?
        }
        struct Paging: Decodable {
            var pages: Int?
            var total: Int?
        }
        struct Cursor: Decodable {
            var next_cursor: String?
        }
        struct Messages: Decodable {
            var total: Int?
            var matches: [Match]?
            var paging: Paging?
            var pagination: Cursor?
        }
        var messages: Messages?
        var response_metadata: Cursor?
    }
}

extension SnippetBuilder {
    /// A snippet of already-highlighted text (a remote's): about `width` words around the first marked match,
    /// whitespace collapsed, with `…` where text was cut.
    static func window(_ highlighted: String, width: Int = 30) -> String {
        let words = highlighted.split(whereSeparator: \.isWhitespace)
        guard words.count > width else { return words.joined(separator: " ") }
        let first = words.firstIndex { Highlight.isMarked($0) } ?? 0
        let start = max(0, min(first - width / 3, words.count - width))
        let end = min(words.count, start + width)
        var text = words[start..<end].joined(separator: " ")
        // A cut inside a highlight would leave it open.
        let opens = text.components(separatedBy: Highlight.start).count
        let closes = text.components(separatedBy: Highlight.end).count
        if opens > closes { text += Highlight.end }
        return (start > 0 ? "… " : "") + text + (end < words.count ? " …" : "")
    }
}
