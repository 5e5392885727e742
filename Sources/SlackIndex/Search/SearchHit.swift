/// A search result: the message, its snippet and its rank.
public struct SearchHit: Sendable {
    public var message: Message
    /// Text around the best match; matches wrapped in U+E000 … U+E001 (Slack's own highlight markers).
    public var snippet: String
    /// Lower is better (bm25); in merged local + remote results, the fused rank score (higher is better).
    public var score: Double
    /// Where the hit came from: the archive, the remote search, or both.
    public var source: HitSource = .local
    /// The remote's permalink, for hits the archive cannot link itself.
    public var remotePermalink: String? = nil
    /// The name of the attached file the words were found in, when they are not in the message's own text (the
    /// snippet is then the file's).
    public var matchedFile: String? = nil

    /// The best link to the message: the archive's own, else the remote's.
    public var permalink: String? { message.permalink ?? remotePermalink }
}

/// Provenance of a search hit.
public enum HitSource: String, Sendable, Codable {
    case local, remote, both
}

/// Slack's highlight markers, used in snippets.
public enum Highlight {
    public static let start = "\u{E000}"
    public static let end = "\u{E001}"

    /// The text holds a highlight. A scan of its scalars: `String.contains` with Foundation imported went through
    /// `range(of:options:locale:)`, 2.4% of `bench search`'s samples on medium words at 1M.
    static func isMarked(_ text: some StringProtocol) -> Bool { text.unicodeScalars.contains("\u{E000}") }
}
