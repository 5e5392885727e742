/// A search parsed from Slack's query syntax: free-text terms, modifier filters and notes about the input.
///
/// Produced by ``QueryParser/parse(_:today:)``. ``slackSyntax`` renders it back for Slack's `search.messages`.
public struct SearchQuery: Sendable, Equatable {
    /// Free-text terms, in input order.
    public var terms: [Term]
    /// Modifier filters (`in:`, `from:`, dates, …), in input order.
    public var filters: [Filter]
    /// Human-readable sentences describing input that was ignored or reinterpreted.
    public var notes: [String]
    /// Date modifiers whose value is not a date ``DateExpression`` reads (`before:03/15/2024`), as typed. They
    /// are searched as words, as Slack does; the CLI refuses them instead (a wrong date would silently match
    /// nothing).
    public var unreadDates: [String] = []

    /// Creates a query from its parts.
    public init(terms: [Term] = [], filters: [Filter] = [], notes: [String] = []) {
        self.terms = terms
        self.filters = filters
        self.notes = notes
    }

    /// True when there is nothing to search for: no terms and no filters.
    public var isEmpty: Bool { terms.isEmpty && filters.isEmpty }

    /// One free-text search term (the store's type: the parser's terms are what the index matches).
    public typealias Term = SearchTerm

    /// A modifier that restricts where, when or by whom messages were posted.
    public enum Filter: Sendable, Hashable {
        /// `in:#channel`, `in:@person` (a DM), `-in:…` when negated.
        case inConversation(ConversationRef, negated: Bool)
        /// `from:@person`, `-from:…` when negated.
        case from(UserRef, negated: Bool)
        /// `to:@person`: messages sent to that person (DMs and mentions, as Slack defines it).
        case to(UserRef)
        /// `with:@person`: threads and DMs with that person.
        case with(UserRef)
        /// `before:day`: strictly before the start of `day` (local time).
        case before(Day)
        /// `after:day`: from the start of the day *after* `day` (Slack's `after:` excludes the day itself).
        case after(Day)
        /// `on:day`: during that local day.
        case on(Day)
        /// `during:month|year|day`: inside the inclusive day range.
        case during(DayRange)
        /// `has:link`, `has:file`, `has:reaction`, `has:pin`, `has::emoji:`.
        case has(HasKind)
        /// `is:thread`: messages that are part of a thread.
        case isThread
    }

    /// The conversation named by `in:`.
    public enum ConversationRef: Sendable, Hashable {
        /// A channel name without `#` (`in:#general`, `in:general`, `in:"my channel"`), case as typed.
        case name(String)
        /// A conversation id (`in:C0123ABCD`, `in:<#C0123ABCD|general>`).
        case id(String)
        /// The direct-message conversation with a person (`in:@alice`).
        case dmWith(UserRef)
    }

    /// The query with `me` (in `from:`, `to:`, `with:`, `in:@me`) replaced by `user`, for a service where `me`
    /// would be someone else (a remote asked with another person's token); nil when the query names `me` and
    /// `user` is nil.
    package func replacingMe(with user: String?) -> SearchQuery? {
        func person(_ ref: UserRef) -> UserRef? {
            guard ref == .me else { return ref }
            return user.map { .id($0) }
        }
        var copy = self
        var filters: [Filter] = []
        for filter in self.filters {
            switch filter {
            case .from(let ref, let negated):
                guard let ref = person(ref) else { return nil }
                filters.append(.from(ref, negated: negated))
            case .to(let ref):
                guard let ref = person(ref) else { return nil }
                filters.append(.to(ref))
            case .with(let ref):
                guard let ref = person(ref) else { return nil }
                filters.append(.with(ref))
            case .inConversation(.dmWith(let ref), let negated):
                guard let ref = person(ref) else { return nil }
                filters.append(.inConversation(.dmWith(ref), negated: negated))
            default:
                filters.append(filter)
            }
        }
        copy.filters = filters
        return copy
    }

    /// A person named by `from:`, `to:`, `with:` or `in:@…`.
    public enum UserRef: Sendable, Hashable {
        /// A handle or display name without `@` (`@alice`, `alice`, `"Alice Smith"`), case as typed.
        case handle(String)
        /// A user id (`U0123ABCD`, `W0123ABCD`, `<@U0123ABCD>`, `<@U0123ABCD|alice>`).
        case id(String)
        /// The searching user (`me`, `@me`).
        case me

        /// As the query wrote it, without `@`.
        var display: String {
            switch self {
            case .handle(let name): name.hasPrefix("@") ? String(name.dropFirst()) : name
            case .id(let id): id
            case .me: "me"
            }
        }
    }

    /// What `has:` asks for.
    public enum HasKind: Sendable, Hashable {
        /// `has:link`.
        case link
        /// `has:file`.
        case file
        /// `has:reaction` (any reaction).
        case reaction
        /// `has:pin`.
        case pin
        /// `has::name:`: a specific reaction emoji; the name is lowercased and has no colons.
        case emoji(String)
        /// `has:image` (`images`) and `type:KIND`: a file of that kind: `images`, `snippets`, `posts`, `pdfs`,
        /// `zips`, or a file type or name extension (`png`, `csv`), lowercased.
        case fileType(String)
    }
}

extension SearchQuery {
    /// The query rendered in Slack's search syntax, e.g. for the remote `search.messages` API.
    ///
    /// Terms come first, then filters, separated by single spaces. For every query produced by the parser,
    /// `QueryParser.parse(q.slackSyntax, today:)` yields the same `terms` and `filters` (notes describe the
    /// original text and are not re-created). Dates are rendered as absolute `YYYY-MM-DD` days.
    /// - Complexity: O(total length of terms and filters).
    public var slackSyntax: String {
        (terms.map(\.slackSyntax) + filters.map(\.slackSyntax)).joined(separator: " ")
    }
}

extension SearchQuery.Term {
    /// The term in Slack syntax: `word`, `-word`, `"a phrase"`, `stem*`.
    public var slackSyntax: String {
        let sign = negated ? "-" : ""
        switch kind {
        case .word: return sign + text
        case .phrase: return sign + "\"" + text + "\""
        case .prefix: return sign + text + "*"
        }
    }
}

extension SearchQuery.Filter {
    /// The filter in Slack syntax, e.g. `-in:#general`, `from:<@U0123ABCD>`, `during:2024-05`.
    public var slackSyntax: String {
        switch self {
        case let .inConversation(ref, negated):
            return (negated ? "-in:" : "in:") + ref.slackSyntax
        case let .from(user, negated):
            return (negated ? "-from:" : "from:") + user.slackSyntax
        case .to(let user):
            return "to:" + user.slackSyntax
        case .with(let user):
            return "with:" + user.slackSyntax
        case .before(let day):
            return "before:\(day)"
        case .after(let day):
            return "after:\(day)"
        case .on(let day):
            return "on:\(day)"
        case .during(let range):
            return Self.duringSyntax(range)
        case .has(let kind):
            return "has:" + kind.slackSyntax
        case .isThread:
            return "is:thread"
        }
    }

    /// `during:` for a day, a whole month or a whole year; any other range becomes an `after:`/`before:` pair.
    private static func duringSyntax(_ range: DayRange) -> String {
        let first = range.first
        let last = range.last
        if first == last {
            return "during:\(first)"
        }
        if let month = DayRange.month(first.month, of: first.year), month == range {
            return "during:\(first.description.prefix(7))"
        }
        if let year = DayRange.year(first.year), year == range {
            return "during:\(first.description.prefix(4))"
        }
        return "after:\(first.adding(days: -1)) before:\(last.adding(days: 1))"
    }
}

extension SearchQuery.ConversationRef {
    /// The value after `in:`: `#name`, `"#name with spaces"`, `<#C0123ABCD>`, `@alice`.
    public var slackSyntax: String {
        switch self {
        case .name(let name):
            return SyntaxText.needsQuoting(name) ? "\"#\(name)\"" : "#\(name)"
        case .id(let id):
            return "<#\(id)>"
        case .dmWith(.me):
            return "@me"
        case .dmWith(let user):
            return user.slackSyntax
        }
    }
}

extension SearchQuery.UserRef {
    /// The value after `from:`/`to:`/`with:`: `me`, `@alice`, `"@Alice Smith"`, `<@U0123ABCD>`.
    public var slackSyntax: String {
        switch self {
        case .me:
            return "me"
        case .handle(let handle):
            return SyntaxText.needsQuoting(handle) ? "\"@\(handle)\"" : "@\(handle)"
        case .id(let id):
            return "<@\(id)>"
        }
    }
}

extension SearchQuery.HasKind {
    /// The value after `has:`: `link`, `file`, `reaction`, `pin` or `:name:`.
    public var slackSyntax: String {
        switch self {
        case .link: return "link"
        case .file: return "file"
        case .reaction: return "reaction"
        case .pin: return "pin"
        case .emoji(let name): return ":\(name):"
        // Slack knows `has:image`; other kinds are asked of a remote as any file.
        case .fileType(let kind): return kind == "images" ? "image" : "file"
        }
    }
}

/// Character classes shared by the parser and the renderer.
enum SyntaxText {
    /// Whether a scalar ends an unquoted token: Unicode whitespace, control characters and parentheses.
    static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
            || scalar == "(" || scalar == ")"
    }

    /// Whether an unquoted modifier value would be cut short, so the renderer must quote it.
    static func needsQuoting(_ text: String) -> Bool {
        text.isEmpty || text.unicodeScalars.contains(where: isSeparator)
    }

    /// Whether a scalar is a letter or digit (general category L* or N*), i.e. something the index holds.
    static func isSearchable(_ scalar: Unicode.Scalar) -> Bool {
        IndexText.isSearchable(scalar)
    }
}
