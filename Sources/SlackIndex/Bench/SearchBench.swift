import Foundation

/// A seeded generator (SplitMix64): equal seeds give equal sequences, so a workload drawn from an archive is the
/// same every run (the tests' fuzzers and model tests use it too).
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Search benchmark: a mixed workload drawn from the archive's own vocabulary (or the user's queries).
@_spi(Benchmarks) public struct SearchBench: Sendable {
    /// One query of the workload and its kind (rare, medium, common, phrase, prefix, filter, filter-only, user).
    public struct Query: Sendable, Codable {
        public var kind: String
        public var text: String

        public init(kind: String, text: String) {
            self.kind = kind
            self.text = text
        }
    }

    /// Figures per kind and overall.
    public struct Result: Sendable, Codable {
        public var queries: Int
        public var runs: Int
        public var overall: LatencySummary
        public var byKind: [String: LatencySummary]
        public var hits: Int
        /// Every sample (ms), for plots.
        public var samples: [Double]
        /// The queries slowest at their median over the runs, slowest first (at most `slowestShown`): what the tail is.
        public var slowest: [Slow] = []

        private enum CodingKeys: String, CodingKey {
            case queries, runs, hits, overall, samples, slowest
            case byKind = "by_kind"
        }
    }

    /// A query of the tail and its median latency over the runs.
    public struct Slow: Sendable, Codable {
        public var kind: String
        public var text: String
        public var medianMs: Double

        private enum CodingKeys: String, CodingKey {
            case kind, text
            case medianMs = "median_ms"
        }
    }

    /// How many of the slowest queries a result names.
    public static let slowestShown = 10

    package var archive: any ArchiveStore
    public var runs = 3
    public var warmup = 1
    public var limit = 20

    public init(archive: Archive) {
        self.archive = archive.store
    }

    /// The built-in mixed workload (200 queries): rare, medium and very common words, phrases, prefixes,
    /// words with filters and filters alone, drawn with a fixed seed from this archive.
    public func builtInWorkload(seed: UInt64 = 42) throws -> [Query] {
        var rng = SeededGenerator(seed: seed)
        let useful = { (word: String) in word.unicodeScalars.allSatisfy(\.isASCII) && word.count >= 3 }
        let common = try archive.indexWords(mostFrequentFirst: true, limit: 40).filter(useful).prefix(15)
        var medium = try archive.indexWords(documents: 500...20_000).filter(useful)
        var rare = try archive.indexWords(documents: 2...20, limit: 5_000).filter(useful)
        medium.shuffle(using: &rng)
        rare.shuffle(using: &rng)
        var queries: [Query] = common.map { Query(kind: "common", text: $0) }
        queries += medium.prefix(40).map { Query(kind: "medium", text: $0) }
        queries += rare.prefix(40).map { Query(kind: "rare", text: $0) }
        queries += try phraseQueries(count: 30, using: &rng)
        queries += medium.dropFirst(40).prefix(25).map { Query(kind: "prefix", text: String($0.prefix(4)) + "*") }
        let channels = try archive.busiestChannelNames(limit: 5)
        let posters = try archive.busiestPosterHandles(limit: 10)
        let (first, last) = try archive.timeRange()
        queries += filterQueries(
            words: Array(medium.dropFirst(65)), common: Array(common), channels: channels, posters: posters,
            days: first...max(first, last), using: &rng)
        return queries
    }

    /// Words with filters (`in:`, `from:`, `after:`, `before:` with an exclusion) and filters alone.
    private func filterQueries(
        words extra: [String], common: [String], channels: [String], posters: [String], days: ClosedRange<Int64>,
        using rng: inout SeededGenerator
    ) -> [Query] {
        var queries: [Query] = []
        func day(_ key: Int64) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            return formatter.string(from: Date(timeIntervalSince1970: Double(key / 1_000_000)))
        }
        for i in 0..<30 where !extra.isEmpty && !channels.isEmpty && !posters.isEmpty {
            let word = extra[i % extra.count]
            let when = day(Int64.random(in: days, using: &rng))
            switch i % 4 {
            case 0: queries.append(Query(kind: "filter", text: "in:#\(channels[i % channels.count]) \(word)"))
            case 1: queries.append(Query(kind: "filter", text: "from:@\(posters[i % posters.count]) \(word)"))
            case 2: queries.append(Query(kind: "filter", text: "\(common[common.startIndex + i % common.count]) after:\(when)"))
            default: queries.append(Query(kind: "filter", text: "\(word) -\(common[common.startIndex]) before:\(when)"))
            }
        }
        for i in 0..<20 where !channels.isEmpty && !posters.isEmpty {
            switch i % 4 {
            case 0: queries.append(Query(kind: "filter-only", text: "in:#\(channels[i % channels.count])"))
            case 1: queries.append(Query(kind: "filter-only", text: "from:@\(posters[i % posters.count])"))
            case 2: queries.append(Query(kind: "filter-only", text: "in:#\(channels[i % channels.count]) has:link"))
            default: queries.append(Query(kind: "filter-only", text: "from:@\(posters[i % posters.count]) is:thread"))
            }
        }
        return queries
    }

    /// Two-word phrases drawn from random messages.
    private func phraseQueries(count: Int, using rng: inout SeededGenerator) throws -> [Query] {
        guard let ids = try archive.messageIDRange(), ids.lowerBound < ids.upperBound else { return [] }
        var queries: [Query] = []
        var attempts = 0
        while queries.count < count && attempts < 1_000 {
            attempts += 1
            let id = MessageID(rawValue: Int64.random(in: ids.lowerBound.rawValue...ids.upperBound.rawValue, using: &rng))
            guard let text = try archive.searchText(atOrAfter: id) else { continue }
            let words = text.split { !$0.isLetter }.map(String.init).filter { $0.count >= 3 }
            guard words.count >= 3 else { continue }
            let start = Int.random(in: 0..<(words.count - 1), using: &rng)
            queries.append(Query(kind: "phrase", text: "\"\(words[start]) \(words[start + 1])\""))
        }
        return queries
    }

    /// Runs `queries` (`warmup` untimed passes, then `runs` timed ones) through the search engine.
    public func run(_ queries: [Query], options: SearchOptions = SearchOptions()) throws -> Result {
        let engine = SearchEngine(store: archive)
        var options = options
        options.limit = limit
        var all: [Double] = []
        var byKind: [String: [Double]] = [:]
        var hits = 0
        for _ in 0..<warmup {
            for query in queries { _ = try? engine.search(query.text, options: options) }
        }
        var perQuery = Array(repeating: [Double](), count: queries.count)
        for _ in 0..<runs {
            for (index, query) in queries.enumerated() {
                var found = 0
                let seconds = measure { found = (try? engine.search(query.text, options: options))?.hits.count ?? 0 }
                hits += found
                all.append(seconds)
                byKind[query.kind, default: []].append(seconds)
                perQuery[index].append(seconds)
            }
        }
        let slowest = zip(queries, perQuery).map { query, seconds in
            Slow(kind: query.kind, text: query.text, medianMs: seconds.isEmpty ? 0 : seconds.sorted()[seconds.count / 2] * 1000)
        }
        return Result(
            queries: queries.count, runs: runs, overall: LatencySummary(seconds: all),
            byKind: byKind.mapValues { LatencySummary(seconds: $0) }, hits: hits / max(1, runs),
            samples: all.map { $0 * 1000 },
            slowest: Array(slowest.sorted { $0.medianMs > $1.medianMs }.prefix(Self.slowestShown)))
    }
}
