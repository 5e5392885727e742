/// Removes access tokens from file URLs before they are stored (`?t=xoxe-…`, `token=…`).
enum URLScrubber {
    /// The URL without query items that carry a token; the rest of the URL is kept as written.
    ///
    /// - Complexity: O(n) in the URL's length.
    static func strippingTokens(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let base = url[..<question]
        var fragment = ""
        var query = url[url.index(after: question)...]
        if let hash = query.firstIndex(of: "#") {
            fragment = String(query[hash...])
            query = query[..<hash]
        }
        let kept = query.split(separator: "&").filter { item in
            let parts = item.split(separator: "=", maxSplits: 1)
            let key = parts.first.map { $0.lowercased() } ?? ""
            let value = parts.count > 1 ? parts[1].lowercased() : ""
            if ["t", "token", "access_token", "x-amz-security-token", "x-amz-signature"].contains(key) { return false }
            return !value.hasPrefix("xox")
        }
        return String(base) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + fragment
    }
}
