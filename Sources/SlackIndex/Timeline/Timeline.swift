import Foundation
import Synchronization

/// Where a page starts.
public enum TimelineAnchor: Sendable, Hashable {
    /// The newest page.
    case newest
    /// The oldest page.
    case oldest
    /// Messages strictly before this time (µs).
    case before(Int64)
    /// Messages at or after this time (µs).
    case after(Int64)
    /// Messages around this time, the message at (or right after) it in the middle.
    case around(Int64)
}

/// An opaque position that continues a listing: it names the conversation, the view (history or one thread), the
/// direction and a keyset position (ts, row id), so it stays valid while messages are added, edited or imported
/// behind it.
public struct TimelineCursor: Sendable, Hashable, CustomStringConvertible {
    public var conversationID: String
    /// The thread's ts for a thread listing; nil for the channel history.
    public var threadTS: String?
    public var direction: Archive.PageDirection
    public var position: TimelinePosition
    /// The page size and deleted-message choice of the page that made it, so that the next page keeps them
    /// (nil and false in cursors made without them, and in the v1 form).
    public var limit: Int?
    public var includeDeleted = false

    /// The cursor as users pass it around (`--cursor`): URL-safe base64, no padding.
    public var description: String {
        var parts = [
            limit == nil ? "v1" : "v2", conversationID, threadTS ?? "-", direction == .before ? "b" : "a",
            String(position.tsKey), String(position.rowID),
        ]
        if let limit { parts += [String(limit), includeDeleted ? "d" : "-"] }
        let text = parts.joined(separator: " ")
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public init(conversationID: String, threadTS: String?, direction: Archive.PageDirection, position: TimelinePosition) {
        self.conversationID = conversationID
        self.threadTS = threadTS
        self.direction = direction
        self.position = position
    }

    /// Reads a cursor printed by `description`.
    ///
    /// - Throws: `TimelineError.badCursor`.
    public init(parsing text: String) throws {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { throw TimelineError.badCursor(text) }
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ").map(String.init)
        guard parts.count == 6 && parts[0] == "v1" || parts.count == 8 && parts[0] == "v2",
            let ts = Int64(parts[4]), let row = Int64(parts[5]), parts[3] == "b" || parts[3] == "a"
        else { throw TimelineError.badCursor(text) }
        if parts.count == 8 {
            guard let limit = Int(parts[6]), (1...Timeline.maximumLimit).contains(limit), parts[7] == "d" || parts[7] == "-"
            else { throw TimelineError.badCursor(text) }
            self.limit = limit
            includeDeleted = parts[7] == "d"
        }
        conversationID = parts[1]
        threadTS = parts[2] == "-" ? nil : parts[2]
        direction = parts[3] == "b" ? .before : .after
        position = TimelinePosition(tsKey: ts, rowID: row)
    }
}

/// A page of messages, oldest to newest, with the cursors around it (nil at either end).
public struct TimelinePage: Sendable {
    public var conversation: Conversation
    public var messages: [Message]
    /// Continues with older messages.
    public var previous: TimelineCursor?
    /// Continues with newer messages.
    public var next: TimelineCursor?
}

/// Why a timeline read failed; `description` is what the user sees.
public enum TimelineError: Error, CustomStringConvertible, Sendable {
    case badCursor(String)
    case threadNotFound(conversation: String, ts: String)

    public var description: String {
        switch self {
        case .badCursor(let text):
            "'\(text)' is not a cursor printed by slackindex. Use the previous/next value from a page's output."
        case .threadNotFound(let conversation, let ts):
            "No message with ts \(ts) in \(conversation)."
        }
    }
}

/// History and thread pages read through an LRU cache of pages, invalidated precisely on writes.
///
/// A cached page remembers the time range it covers; a committed write to a message drops only the pages of that
/// message's conversation whose range (or open end) contains the message's time (for a reply: its thread's
/// pages). Invalidations are applied before every read, so a read after a write never returns stale text.
public final class Timeline: Sendable {
    /// The page cache key.
    package struct PageKey: Hashable, Sendable {
        var conversation: Int64
        var scope: Archive.PageScope
        var direction: Archive.PageDirection
        var position: TimelinePosition?
        var limit: Int
        var includeDeleted: Bool
    }

    /// A cached page and the range it covers.
    package struct CachedPage: Sendable {
        var messages: [Message]
        /// True when the store had more messages beyond the page in its direction.
        var hasMore: Bool
    }

    /// The largest page a cursor may carry.
    public static let maximumLimit = 10_000

    package let archive: any Timelines & Directory
    package let cache: MessageCache<PageKey, CachedPage>
    private let pending = PendingChanges()

    /// Message ids written since the last read (or "too many: drop everything").
    private final class PendingChanges: Sendable {
        let state = Mutex<(ids: [Int64], dropAll: Bool)>(([], false))
    }

    /// - Parameters:
    ///   - maxPages: how many pages the cache holds at most.
    ///   - maxBytes: how many bytes of message text it holds at most (estimated).
    public convenience init(archive: Archive, maxPages: Int = 2_048, maxBytes: Int = 64 << 20) {
        self.init(store: archive.store, maxPages: maxPages, maxBytes: maxBytes)
    }

    /// A timeline over an archive's roles.
    package init(store: any Timelines & Directory, maxPages: Int = 2_048, maxBytes: Int = 64 << 20) {
        self.archive = store
        cache = MessageCache(maxEntries: maxPages, maxBytes: maxBytes)
        store.onMessageChanges { [pending] ids in
            pending.state.withLock { state in
                if state.dropAll { return }
                state.ids += ids
                if state.ids.count > 20_000 {
                    state.ids = []
                    state.dropAll = true
                }
            }
        }
    }

    /// A page of a conversation's channel view (top-level messages and thread broadcasts).
    ///
    /// - Complexity: O(1) from the cache; O(log n + limit) from the store, at any depth.
    public func history(
        _ conversation: Conversation, at anchor: TimelineAnchor = .newest, limit: Int = 50,
        includeDeleted: Bool = false
    ) throws -> TimelinePage {
        try read(conversation, scope: .history, threadTS: nil, anchor: anchor, limit: limit, includeDeleted: includeDeleted)
    }

    /// A page of one thread: the parent and its replies in order.
    ///
    /// - Throws: `TimelineError.threadNotFound` when no message has that ts.
    /// - Complexity: as `history`.
    public func thread(
        _ conversation: Conversation, threadTS: String, at anchor: TimelineAnchor = .oldest, limit: Int = 50,
        includeDeleted: Bool = false
    ) throws -> TimelinePage {
        guard let key = SlackTimestamp.parseKey(threadTS),
            let root = try archive.message(conversation: conversation, tsKey: key)
        else { throw TimelineError.threadNotFound(conversation: conversation.displayName, ts: threadTS) }
        // A reply's ts opens its whole thread.
        let threadKey = root.threadTS.flatMap(SlackTimestamp.parseKey) ?? root.tsKey
        let threadString = root.threadTS ?? root.ts
        return try read(
            conversation, scope: .thread(threadKey: threadKey), threadTS: threadString, anchor: anchor, limit: limit,
            includeDeleted: includeDeleted)
    }

    /// Continues from a cursor.
    ///
    /// - Complexity: as `history`.
    public func page(_ cursor: TimelineCursor, limit: Int = 50, includeDeleted: Bool = false) throws -> TimelinePage {
        let conversation = try archive.conversation(named: cursor.conversationID)
        let anchor: TimelineAnchor
        switch cursor.direction {
        case .before: anchor = .before(cursor.position.tsKey)
        case .after: anchor = .after(cursor.position.tsKey)
        }
        let scope: Archive.PageScope =
            cursor.threadTS.flatMap(SlackTimestamp.parseKey).map { .thread(threadKey: $0) } ?? .history
        return try read(
            conversation, scope: scope, threadTS: cursor.threadTS, anchor: anchor, limit: limit,
            includeDeleted: includeDeleted, exact: cursor.position)
    }

    /// Cache counters (hits, misses, evictions…).
    public func stats() -> CacheStats { cache.stats() }

    /// Over 60 lines: cache lookup, store read and cursor making share the page key and the invalidation
    /// generation read before the store; splitting them would let a write slip between the two.
    private func read(
        _ conversation: Conversation, scope: Archive.PageScope, threadTS: String?, anchor: TimelineAnchor,
        limit: Int, includeDeleted: Bool, exact: TimelinePosition? = nil
    ) throws -> TimelinePage {
        try applyPendingInvalidations()
        let limit = max(1, limit)
        func fetch(_ direction: Archive.PageDirection, _ position: TimelinePosition?, _ count: Int) throws
            -> CachedPage
        {
            let key = PageKey(
                conversation: conversation.rowID, scope: scope, direction: direction, position: position,
                limit: count, includeDeleted: includeDeleted)
            let page = try cache.value(forKey: key) {
                var messages = try archive.page(
                    conversation: conversation, scope: scope, direction: direction, from: position,
                    limit: count + 1, includeDeleted: includeDeleted)
                let hasMore = messages.count > count
                if hasMore {
                    if direction == .before { messages.removeFirst() } else { messages.removeLast() }
                }
                let page = CachedPage(messages: messages, hasMore: hasMore)
                return (page, Timeline.cost(of: messages))
            }
            return page ?? CachedPage(messages: [], hasMore: false)
        }
        var previous: TimelineCursor?
        var next: TimelineCursor?
        var messages: [Message]
        func cursor(_ direction: Archive.PageDirection, _ message: Message?) -> TimelineCursor? {
            message.map { positionCursor(TimelinePosition(tsKey: $0.tsKey, rowID: $0.rowID), direction) } ?? nil
        }
        switch anchor {
        case .newest, .before:
            var position: TimelinePosition?
            if case .before(let t) = anchor { position = exact ?? TimelinePosition(tsKey: t, rowID: Int64.min) }
            let page = try fetch(.before, position, limit)
            messages = page.messages
            previous = page.hasMore ? cursor(.before, messages.first) : nil
            next = position == nil ? nil : cursor(.after, messages.last ?? nil) ?? positionCursor(position, .after)
        case .oldest, .after:
            var position: TimelinePosition?
            if case .after(let t) = anchor { position = exact ?? TimelinePosition(tsKey: t, rowID: Int64.min) }
            let page = try fetch(.after, position, limit)
            messages = page.messages
            next = page.hasMore ? cursor(.after, messages.last) : nil
            previous = position == nil ? nil : cursor(.before, messages.first ?? nil) ?? positionCursor(position, .before)
        case .around(let t):
            let center = TimelinePosition(tsKey: t, rowID: Int64.min)
            let olderCount = limit / 2
            let older = olderCount > 0 ? try fetch(.before, center, olderCount) : CachedPage(messages: [], hasMore: true)
            let newer = try fetch(.after, center, limit - olderCount)
            messages = older.messages + newer.messages
            previous = older.hasMore ? cursor(.before, messages.first) : nil
            next = newer.hasMore ? cursor(.after, messages.last) : nil
        }
        return TimelinePage(conversation: conversation, messages: messages, previous: previous, next: next)

        func positionCursor(_ position: TimelinePosition?, _ direction: Archive.PageDirection) -> TimelineCursor? {
            position.map {
                var cursor = TimelineCursor(
                    conversationID: conversation.id, threadTS: threadTS, direction: direction, position: $0)
                cursor.limit = min(limit, Timeline.maximumLimit)
                cursor.includeDeleted = includeDeleted
                return cursor
            }
        }
    }

    /// Estimated bytes of a page, for the cache's byte budget.
    static func cost(of messages: [Message]) -> Int {
        messages.reduce(64) { $0 + 160 + $1.text.utf8.count + $1.plainText.utf8.count + $1.ts.utf8.count }
    }

    /// Drops the cached pages that the writes committed since the last read touched.
    ///
    /// - Complexity: O(w × p) for w written messages and p cached pages (w is capped: past 20,000 writes the whole
    ///   cache is dropped instead).
    private func applyPendingInvalidations() throws {
        let (ids, dropAll) = pending.state.withLock { state -> ([Int64], Bool) in
            defer { state = ([], false) }
            return (state.ids, state.dropAll)
        }
        if dropAll {
            cache.removeAll()
            return
        }
        guard !ids.isEmpty else { return }
        let changes = try archive.locations(of: ids)
        guard !changes.isEmpty else { return }
        cache.removeAll { key, page in
            changes.contains { change in
                guard change.conversation == key.conversation else { return false }
                return Timeline.page(key: key, page: page, isTouchedBy: change.tsKey, threadKey: change.threadKey)
            }
        }
    }

    /// Whether a write at `tsKey` (in thread `threadKey`) changes what the cached page shows.
    static func page(key: PageKey, page: CachedPage, isTouchedBy tsKey: Int64, threadKey: Int64?) -> Bool {
        switch key.scope {
        case .thread(let thread):
            return threadKey == thread || tsKey == thread
        case .history:
            // A reply changes its parent's row (reply count); anything else changes its own position.
            let times = [tsKey] + (threadKey.map { [$0] } ?? [])
            return times.contains { t in
                let first = page.messages.first?.tsKey
                let last = page.messages.last?.tsKey
                switch key.direction {
                case .before:
                    let upper = key.position?.tsKey ?? Int64.max
                    guard t <= upper else { return false }
                    return !page.hasMore || first.map { t >= $0 } ?? true
                case .after:
                    let lower = key.position?.tsKey ?? Int64.min
                    guard t >= lower else { return false }
                    return !page.hasMore || last.map { t <= $0 } ?? true
                }
            }
        }
    }
}
