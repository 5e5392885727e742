/// Parses Slack's search syntax (`budget -draft "q3 plan" from:@alice in:#finance after:2024-05-01`).
///
/// Parsing never fails: anything that is not valid syntax is searched as plain words, or dropped when it holds
/// no letters or digits, and ``SearchQuery/notes`` says what happened.
package enum QueryParser {
    /// At most this many terms are kept; later ones are dropped with a note.
    package static let maxTerms = 64
    /// At most this many filters are kept; later ones are dropped with a note.
    package static let maxFilters = 64
    /// Terms longer than this many Unicode scalars are shortened with a note.
    package static let maxTermLength = 256
    /// At most this many notes are kept; a final note counts the rest.
    package static let maxNotes = 16

    /// Parses `text` as a Slack search query.
    ///
    /// - Parameters:
    ///   - text: Any string; control characters act as spaces and curly quotes as straight quotes.
    ///   - today: The current day in the searching user's time zone. It resolves `today`, `yesterday` and
    ///     month names in `during:` (a month name means the most recent such month that has started:
    ///     this year's if it is the current month or earlier, otherwise last year's).
    /// - Returns: The parsed query. It never traps or throws.
    /// - Complexity: O(n) in the number of Unicode scalars of `text`.
    package static func parse(_ text: String, today: Day) -> SearchQuery {
        var parser = Parser(text: text, today: today)
        parser.run()
        return parser.finish()
    }

    /// The filter a modifier given apart from the query text means (`in`, `general` as in `in:general`), or nil
    /// when the value is not one the modifier takes (the caller can then search it as the query would).
    package static func filter(_ name: String, value: String, today: Day) -> SearchQuery.Filter? {
        Parser(text: "", today: today).filter(name: name.lowercased(), value: value)
    }
}

/// The single-pass scanner behind ``QueryParser/parse(_:today:)``.
private struct Parser {
    /// The input as scalars, with control characters turned into spaces and curly quotes into `"`.
    private let scalars: [Unicode.Scalar]
    /// `nextQuote[i]` is the first index `>= i` holding `"`, or `scalars.count`; makes quote pairing O(1).
    private let nextQuote: [Int]
    private let today: Day
    private var terms: [SearchQuery.Term] = []
    private var filters: [SearchQuery.Filter] = []
    private var notes: [String] = []
    private var unreadDates: [String] = []
    private var seenNotes: Set<String> = []
    private var omittedNotes = 0
    private var sawParentheses = false

    init(text: String, today: Day) {
        var scalars: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars {
            scalars.append(Parser.normalized(scalar))
        }
        var nextQuote = [Int](repeating: scalars.count, count: scalars.count + 1)
        var index = scalars.count - 1
        while index >= 0 {
            nextQuote[index] = scalars[index] == "\"" ? index : nextQuote[index + 1]
            index -= 1
        }
        self.scalars = scalars
        self.nextQuote = nextQuote
        self.today = today
    }

    // MARK: - Driver

    mutating func run() {
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if SyntaxText.isSeparator(scalar) {
                if scalar == "(" || scalar == ")" { sawParentheses = true }
                index += 1
            } else {
                index = token(at: index)
            }
        }
        if sawParentheses {
            note("ignored ( and ): Slack search has no grouping")
        }
    }

    mutating func finish() -> SearchQuery {
        if omittedNotes > 0 {
            notes.append("\(omittedNotes) more notes left out")
        }
        var query = SearchQuery(terms: terms, filters: filters, notes: notes)
        query.unreadDates = unreadDates
        return query
    }

    /// Parses one token starting at the non-separator `start`; returns the index just past it.
    private mutating func token(at start: Int) -> Int {
        var index = start
        var negated = false
        if scalars[index] == "-" {
            if index + 1 >= scalars.count || SyntaxText.isSeparator(scalars[index + 1]) {
                note("ignored a lone \"-\"")
                return index + 1
            }
            negated = true
            index += 1
        }
        if scalars[index] == "\"" {
            let close = nextQuote[index + 1]
            if close < scalars.count {
                addPhrase(scalars[(index + 1)..<close], negated: negated)
                return close + 1
            }
            index += 1
            if index >= scalars.count || SyntaxText.isSeparator(scalars[index]) {
                note("ignored an unbalanced quote")
                return index
            }
            note("unbalanced quote: searched \(fragment(scalars[(index - 1)..<tokenEnd(from: index)])) as words")
            // Without a pending `-`, re-read the rest as a fresh token (it may start with `-`).
            if !negated { return index }
        }
        if let colon = modifierColon(from: index) {
            return modifier(start: start, nameStart: index, colon: colon, negated: negated)
        }
        let end = tokenEnd(from: index)
        addWord(scalars[index..<end], negated: negated)
        return end
    }

    /// The end of the unquoted token that starts at `index`: the next separator or the end of input.
    private func tokenEnd(from index: Int) -> Int {
        var end = index
        while end < scalars.count, !SyntaxText.isSeparator(scalars[end]) {
            end += 1
        }
        return end
    }

    /// The index of `:` if the token at `index` starts with a modifier name (1–16 ASCII letters then `:`).
    private func modifierColon(from index: Int) -> Int? {
        var end = index
        while end < scalars.count, end - index <= 16, Parser.isASCIILetter(scalars[end]) {
            end += 1
        }
        guard end > index, end - index <= 16, end < scalars.count, scalars[end] == ":" else { return nil }
        return end
    }

    // MARK: - Modifiers

    /// What a modifier's value turned out to be.
    private enum Outcome {
        case filter(SearchQuery.Filter)
        case bad(String)
        case unknown
    }

    /// Parses `name:value` (the name spans `nameStart..<colon`); returns the index just past the value.
    private mutating func modifier(start: Int, nameStart: Int, colon: Int, negated: Bool) -> Int {
        let rawName = Parser.string(scalars[nameStart..<colon])
        let name = rawName.lowercased()
        var valueStart = colon + 1
        var value = ""
        var quoted = false
        var end = valueStart
        var unbalanced = false
        if valueStart < scalars.count, scalars[valueStart] == "\"" {
            let close = nextQuote[valueStart + 1]
            if close < scalars.count {
                value = Parser.collapsingWhitespace(scalars[(valueStart + 1)..<close])
                quoted = true
                end = close + 1
            } else {
                unbalanced = true
                valueStart += 1
            }
        }
        if !quoted {
            end = tokenEnd(from: valueStart)
            value = Parser.string(scalars[valueStart..<end])
        }
        let raw = fragment(scalars[start..<end])
        if unbalanced {
            note("unbalanced quote: ignored the \" in \(raw)")
        }

        switch interpret(name: name, value: value, quoted: quoted) {
        case .filter(let filter):
            guard negated else {
                addFilter(filter)
                return end
            }
            switch filter {
            case let .inConversation(ref, _):
                addFilter(.inConversation(ref, negated: true))
                return end
            case let .from(user, _):
                addFilter(.from(user, negated: true))
                return end
            default:
                note("\"-\(name):\" can't be negated; \"\(raw)\" searched as words")
            }
        case .bad(let message):
            if ["before", "after", "on", "during"].contains(name) { unreadDates.append(raw) }
            note("\(message); \"\(raw)\" searched as words")
        case .unknown:
            if !value.hasPrefix("//") {  // URLs like https://… are ordinary words
                note("unknown modifier \"\(name):\" searched as words")
            }
        }
        if quoted {
            addPhrase(ArraySlice(Array(value.unicodeScalars)), negated: negated)
        } else {
            addWord(ArraySlice(Array((rawName + ":" + value).unicodeScalars)), negated: negated)
        }
        return end
    }

    /// The filter of `name:value` with the value taken as is (quoted when it holds a separator).
    func filter(name: String, value: String) -> SearchQuery.Filter? {
        guard case .filter(let filter) = interpret(name: name, value: value, quoted: SyntaxText.needsQuoting(value))
        else { return nil }
        return filter
    }

    private func interpret(name: String, value: String, quoted: Bool) -> Outcome {
        switch name {
        case "in":
            guard let ref = conversation(value, quoted: quoted) else {
                return .bad("in: needs a channel like #general or a person like @alice")
            }
            return .filter(.inConversation(ref, negated: false))
        case "from", "to", "with":
            guard let user = user(value, quoted: quoted) else {
                return .bad("\(name): needs a person like @alice or me")
            }
            switch name {
            case "from": return .filter(.from(user, negated: false))
            case "to": return .filter(.to(user))
            default: return .filter(.with(user))
            }
        case "before", "after", "on", "during":
            // The same dates as everywhere else (DateExpression); a time of day counts as its day.
            guard let range = DateExpression.parse(value, today: today)?.dayRange else {
                return .bad("\(name): needs a date like 2024-05-01, today, monday, may, 2024-05 or \"last week\"")
            }
            switch name {
            case "before": return .filter(.before(range.first))
            case "after": return .filter(.after(range.last))
            case "on" where range.first == range.last: return .filter(.on(range.first))
            default: return .filter(.during(range))
            }
        case "has":
            guard let kind = Parser.hasKind(value) else {
                return .bad("has: needs link, file, image, reaction, pin or an emoji like :tada:")
            }
            return .filter(.has(kind))
        case "type":
            guard let kind = Parser.fileKind(value) else {
                return .bad("type: needs a kind of file: images, snippets, posts, pdfs, zips, or a file type like png")
            }
            return .filter(.has(.fileType(kind)))
        case "is":
            let lowered = value.lowercased()
            guard lowered == "thread" || lowered == "threads" else {
                return .bad("is: only supports thread")
            }
            return .filter(.isThread)
        default:
            return .unknown
        }
    }

    /// `#name`, `name`, `"my channel"`, `C0123ABCD`, `<#C0123ABCD|name>`, `@alice`, `<@U0123ABCD>`.
    private func conversation(_ value: String, quoted: Bool) -> SearchQuery.ConversationRef? {
        let view = value.unicodeScalars
        if !quoted {
            if let id = Parser.reference(value, sigil: "#") { return .id(id) }
            if let id = Parser.reference(value, sigil: "@") { return .dmWith(.id(id)) }
            if view.first == "<" { return nil }
        }
        if view.first == "@" {
            let rest = String(view.dropFirst())
            if rest.isEmpty { return nil }
            return .dmWith(rest.lowercased() == "me" ? .me : .handle(rest))
        }
        if view.first == "#" {
            let rest = String(view.dropFirst())
            return rest.isEmpty ? nil : .name(rest)
        }
        if value.isEmpty { return nil }
        if !quoted, Parser.isSlackID(value, firstLetters: "CGD") { return .id(value) }
        return .name(value)
    }

    /// `@alice`, `alice`, `"Alice Smith"`, `me`, `U0123ABCD`, `<@U0123ABCD>`, `<@U0123ABCD|alice>`.
    private func user(_ value: String, quoted: Bool) -> SearchQuery.UserRef? {
        var view = value.unicodeScalars[...]
        if !quoted {
            if let id = Parser.reference(value, sigil: "@") { return .id(id) }
            if view.first == "<" { return nil }
        }
        let explicitHandle = view.first == "@"
        if explicitHandle { view = view.dropFirst() }
        let text = String(String.UnicodeScalarView(view))
        if text.isEmpty { return nil }
        if text.lowercased() == "me" { return .me }
        if !quoted, !explicitHandle, Parser.isSlackID(text, firstLetters: "UW") { return .id(text) }
        return .handle(text)
    }

    /// A `type:` value: a kind by its plural (`image` → `images`), or a file type or extension of 1 to 16 ASCII
    /// letters and digits, lowercased; nil otherwise.
    private static func fileKind(_ value: String) -> String? {
        let lowered = value.lowercased()
        switch lowered {
        case "image", "images": return "images"
        case "snippet", "snippets": return "snippets"
        case "post", "posts", "space", "spaces": return "posts"
        case "pdf", "pdfs": return "pdfs"
        case "zip", "zips": return "zips"
        default:
            let scalars = lowered.unicodeScalars
            guard (1...16).contains(scalars.count),
                scalars.allSatisfy({ $0.isASCII && (isASCIILetter($0) || ("0"..."9").contains($0)) })
            else { return nil }
            return lowered
        }
    }

    /// `link`, `file`, `image`, `reaction`, `pin` (and plurals) or `:emoji_name:`.
    private static func hasKind(_ value: String) -> SearchQuery.HasKind? {
        let lowered = value.lowercased()
        switch lowered {
        case "link", "links": return .link
        case "file", "files": return .file
        case "image", "images": return .fileType("images")
        case "reaction", "reactions": return .reaction
        case "pin", "pins", "pinned": return .pin
        default:
            let view = Array(lowered.unicodeScalars)
            guard view.count >= 3, view.first == ":", view.last == ":" else { return nil }
            let inner = view[1..<(view.count - 1)]
            let allowed = inner.allSatisfy { scalar in
                scalar.isASCII && (isASCIILetter(scalar) || ("0"..."9").contains(scalar) || "_+-'".unicodeScalars
                    .contains(scalar))
            }
            return allowed ? .emoji(string(inner)) : nil
        }
    }

    // MARK: - Terms

    /// Adds a word or `stem*` prefix from an unquoted token; drops it when it has no letters or digits.
    private mutating func addWord(_ token: ArraySlice<Unicode.Scalar>, negated: Bool) {
        var word = token
        if word.count > QueryParser.maxTermLength {
            word = word.prefix(QueryParser.maxTermLength)
            note("shortened a term longer than \(QueryParser.maxTermLength) characters")
        }
        var stemEnd = word.endIndex
        while stemEnd > word.startIndex, word[stemEnd - 1] == "*" {
            stemEnd -= 1
        }
        let stem = word[word.startIndex..<stemEnd]
        guard stem.contains(where: SyntaxText.isSearchable) else {
            note("ignored \"\(fragment(word))\": no letters or digits")
            return
        }
        let text = Parser.string(stem)
        if stemEnd == word.endIndex {
            append(SearchQuery.Term(.word, text, negated: negated))
        } else if text.count >= 3 {
            append(SearchQuery.Term(.prefix, text, negated: negated))
        } else {
            note("prefix search needs 3 or more characters before *; \"\(fragment(word))\" searched as \(text)")
            append(SearchQuery.Term(.word, text, negated: negated))
        }
    }

    /// Adds an exact phrase from quoted text; drops it when it has no letters or digits.
    private mutating func addPhrase(_ content: ArraySlice<Unicode.Scalar>, negated: Bool) {
        var text = Array(Parser.collapsingWhitespace(content).unicodeScalars)
        if text.isEmpty {
            note("ignored empty quotes")
            return
        }
        if text.count > QueryParser.maxTermLength {
            let cut = text.prefix(QueryParser.maxTermLength)
            let lastSpace = cut.lastIndex(of: " ") ?? cut.endIndex
            text = Array(cut[..<(lastSpace > 0 ? lastSpace : cut.endIndex)])
            while text.last == " " { text.removeLast() }
            note("shortened a term longer than \(QueryParser.maxTermLength) characters")
        }
        guard text.contains(where: SyntaxText.isSearchable) else {
            note("ignored \"\(fragment(text[...]))\": no letters or digits")
            return
        }
        append(SearchQuery.Term(.phrase, Parser.string(text[...]), negated: negated))
    }

    private mutating func append(_ term: SearchQuery.Term) {
        guard terms.count < QueryParser.maxTerms else {
            note("only the first \(QueryParser.maxTerms) search terms were used")
            return
        }
        terms.append(term)
    }

    private mutating func addFilter(_ filter: SearchQuery.Filter) {
        guard filters.count < QueryParser.maxFilters else {
            note("only the first \(QueryParser.maxFilters) filters were used")
            return
        }
        filters.append(filter)
    }

    // MARK: - Notes and text helpers

    /// Records a note once; after ``QueryParser/maxNotes`` distinct notes, only counts them.
    private mutating func note(_ text: String) {
        guard !seenNotes.contains(text) else { return }
        if notes.count < QueryParser.maxNotes {
            seenNotes.insert(text)
            notes.append(text)
        } else {
            omittedNotes += 1
        }
    }

    /// Input text for a note, cut to 40 scalars.
    private func fragment(_ slice: ArraySlice<Unicode.Scalar>) -> String {
        slice.count <= 40 ? Parser.string(slice) : Parser.string(slice.prefix(40)) + "…"
    }

    private static func normalized(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar {
        case "\u{201C}", "\u{201D}", "\u{201E}", "\u{201F}", "\u{FF02}":
            return "\""
        default:
            return scalar.properties.generalCategory == .control ? " " : scalar
        }
    }

    private static func string(_ slice: ArraySlice<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: slice)
        return String(view)
    }

    private static func string(_ slice: Substring.UnicodeScalarView) -> String {
        String(String.UnicodeScalarView(slice))
    }

    /// Joins whitespace runs into single spaces and trims both ends.
    private static func collapsingWhitespace<C: Collection>(_ content: C) -> String
    where C.Element == Unicode.Scalar {
        var view = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in content {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
                pendingSpace = !view.isEmpty
            } else {
                if pendingSpace { view.append(" ") }
                pendingSpace = false
                view.append(scalar)
            }
        }
        return String(view)
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isUpperOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// A Slack id: a letter from `firstLetters`, then 8+ uppercase letters or digits, with at least one digit.
    private static func isSlackID(_ text: String, firstLetters: String) -> Bool {
        let view = Array(text.unicodeScalars)
        guard view.count >= 9, view.count <= 24, let first = view.first,
              firstLetters.unicodeScalars.contains(first) else { return false }
        return view.allSatisfy(isUpperOrDigit) && view.contains { ("0"..."9").contains($0) }
    }

    /// The id in Slack's `<@U0123ABCD>` / `<#C0123ABCD|label>` reference syntax, for `sigil` `@` or `#`.
    private static func reference(_ value: String, sigil: Unicode.Scalar) -> String? {
        let view = Array(value.unicodeScalars)
        guard view.count >= 4, view[0] == "<", view[1] == sigil, view[view.count - 1] == ">" else { return nil }
        let inner = view[2..<(view.count - 1)]
        let id = inner.prefix { $0 != "|" }
        guard !id.isEmpty, id.count <= 24, id.allSatisfy(isUpperOrDigit) else { return nil }
        return string(id)
    }
}
