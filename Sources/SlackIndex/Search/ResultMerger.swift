/// Merges local and remote hits: one hit per (conversation, ts), ranked by reciprocal rank fusion.
///
/// Relevance order uses RRF: a hit's score is Σ 1 / (k + rank) over the lists it appears in (rank from 1, k = 60,
/// as in Cormack et al. 2009), so a message both sides rank well comes first and neither side's raw scores
/// (bm25 here, Slack's own there) need to be comparable. Time orders simply sort by ts. A hit in both lists
/// keeps the archive's message (richer) and is marked `both`.
package enum ResultMerger {
    /// The fusion constant.
    package static let k = 60.0

    /// - Parameter remote: remote hits already converted to ``SearchHit`` (source `.remote`), in remote order.
    /// - Complexity: O((l + r) log(l + r)).
    package static func merge(local: [SearchHit], remote: [SearchHit], sort: SearchSort, limit: Int) -> [SearchHit] {
        struct Key: Hashable {
            var conversation: String
            var tsKey: Int64
        }
        var merged: [Key: (hit: SearchHit, fused: Double)] = [:]
        var order: [Key] = []
        for (rank, hit) in local.enumerated() {
            let key = Key(conversation: hit.message.conversationID, tsKey: hit.message.tsKey)
            guard merged[key] == nil else { continue }
            var copy = hit
            copy.source = .local
            merged[key] = (copy, 1 / (k + Double(rank + 1)))
            order.append(key)
        }
        for (rank, hit) in remote.enumerated() {
            let key = Key(conversation: hit.message.conversationID, tsKey: hit.message.tsKey)
            let score = 1 / (k + Double(rank + 1))
            if var existing = merged[key] {
                if existing.hit.source == .local {
                    existing.hit.source = .both
                    existing.hit.remotePermalink = existing.hit.remotePermalink ?? hit.remotePermalink
                    existing.fused += score
                    merged[key] = existing
                }
                continue
            }
            var copy = hit
            // `.both` stays: the remote found a message the archive holds but local ranking left out.
            if copy.source != .both { copy.source = .remote }
            merged[key] = (copy, score)
            order.append(key)
        }
        var hits = order.compactMap { key -> SearchHit? in
            guard let entry = merged[key] else { return nil }
            var hit = entry.hit
            hit.score = entry.fused
            return hit
        }
        switch sort {
        case .relevance:
            // Stable on ties: local order first, then remote order.
            let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
            hits.sort { a, b in
                if a.score != b.score { return a.score > b.score }
                let ka = Key(conversation: a.message.conversationID, tsKey: a.message.tsKey)
                let kb = Key(conversation: b.message.conversationID, tsKey: b.message.tsKey)
                return (position[ka] ?? 0) < (position[kb] ?? 0)
            }
        case .newest:
            hits.sort { ($0.message.tsKey, $0.message.conversationID) > ($1.message.tsKey, $1.message.conversationID) }
        case .oldest:
            hits.sort { ($0.message.tsKey, $0.message.conversationID) < ($1.message.tsKey, $1.message.conversationID) }
        }
        return Array(hits.prefix(max(0, limit)))
    }
}
