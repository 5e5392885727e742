@_spi(Benchmarks) @testable import SlackIndex

/// Builds message objects as JSON bytes for the fast parser's oracle test (`FastJSONOracleTests`).
///
/// Every field the decoders read appears with the shapes real exports use and the shapes they must survive:
/// random subsets of fields in random order, numbers as strings and strings as numbers, bools, nulls, wrong types,
/// unknown and duplicated keys, keys spelt with escapes or undecodable, strings with escapes, surrogate pairs,
/// lone surrogates, control bytes and invalid UTF-8, nested reactions, files, attachments, Block Kit trees (past
/// the reference's depth limit) and `message_changed` chains, whitespace and trailing commas. A few cases are
/// then broken on purpose (bytes deleted, inserted, or the text truncated).
struct MessageJSONFuzzer {
    private var rng: SeededGenerator

    init(seed: UInt64) {
        rng = SeededGenerator(seed: seed)
    }

    /// A JSON value before it is written out; scalars hold their exact bytes (strings with their quotes).
    private indirect enum Node {
        case token([UInt8])
        case array([Node])
        case object([(key: [UInt8], value: Node)])
    }

    /// The bytes of one generated case (usually a message object).
    mutating func next() -> [UInt8] {
        let node = roll(100) < 3 ? anyValue(depth: 1) : message(depth: 0)
        var out: [UInt8] = []
        write(node, into: &out)
        if roll(100) < 12 { mutate(&out) }
        return out
    }

    // MARK: - Randomness

    private mutating func roll(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    private mutating func chance(_ percent: Int) -> Bool { roll(100) < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[roll(items.count)] }

    // MARK: - Messages

    private mutating func message(depth: Int) -> Node {
        var members: [(key: [UInt8], value: Node)] = []
        let changed = depth < 3 && chance(depth == 0 ? 30 : 40)
        if chance(70) { members.append((key("type"), lenientString(["message", "message", "reaction_added"]))) }
        if changed {
            members.append((key("subtype"), chance(90) ? string("message_changed") : anyValue(depth: 2)))
        } else if chance(40) {
            let subtypes = ["message_deleted", "bot_message", "thread_broadcast", "file_share", "channel_join"]
            members.append((key("subtype"), lenientString(subtypes)))
        }
        let stamps = ["1720048215.065355", "1720048215.000100", "1433558319.000000", "0", "", "abc"]
        if chance(80) { members.append((key("ts"), lenientString(stamps))) }
        if chance(60) { members.append((key("user"), lenientString(["U0CWRVRF4BH", "U1", "USLACKBOT"]))) }
        if chance(20) { members.append((key("bot_id"), lenientString(["B01", "B0LDQ4T2Q"]))) }
        if chance(25) { members.append((key("username"), lenientString(["deploy-bot", "ann", "Ann Lee"]))) }
        if chance(85) { members.append((key("text"), chance(35) ? string("") : lenientString([]))) }
        if chance(25) { members.append((key("thread_ts"), lenientString(stamps))) }
        if chance(20) { members.append((key("reply_count"), lenientInt())) }
        if chance(20) { members.append((key("edited"), names(["ts", "user"], common: stamps + ["U1"]))) }
        if chance(30) { members.append((key("reactions"), list { $0.reaction() })) }
        if chance(25) { members.append((key("files"), list { $0.file() })) }
        if chance(10) { members.append((key("file"), chance(85) ? file() : anyValue(depth: 2))) }
        if chance(25) { members.append((key("attachments"), list { $0.attachment() })) }
        if chance(40) {
            let deep = chance(10)
            members.append((key("blocks"), list { $0.block(depth: 0, deep: deep) }))
        }
        if chance(15) { members.append((key("pinned_to"), stringArray())) }
        if chance(10) { members.append((key("deleted_ts"), lenientString(stamps))) }
        if chance(15) { members.append((key("channel"), lenientString(["C034TSBWMAQ", "D0VC4NV56E1"]))) }
        if chance(30) {
            members.append((key("user_profile"), names(["name", "real_name", "display_name"], common: [])))
        }
        if chance(15) { members.append((key("bot_profile"), names(["name", "id"], common: ["deploy-bot"]))) }
        if changed ? chance(85) : chance(8) {
            let inner = depth < 3 && chance(85) ? message(depth: depth + 1) : anyValue(depth: 2)
            members.append((key("message"), inner))
        }
        for _ in 0..<roll(3) { members.append((unknownKey(), anyValue(depth: 2))) }
        return object(members)
    }

    private mutating func reaction() -> Node {
        var members: [(key: [UInt8], value: Node)] = []
        if chance(90) { members.append((key("name"), lenientString(["thumbsup", "tada", "+1", "skin-tone-2", ""]))) }
        if chance(70) { members.append((key("count"), lenientInt())) }
        if chance(80) { members.append((key("users"), stringArray())) }
        if chance(10) { members.append((unknownKey(), anyValue(depth: 2))) }
        return object(members)
    }

    private mutating func file() -> Node {
        var members: [(key: [UInt8], value: Node)] = []
        let names = ["report.pdf", "Q3 plan", "image.png", "résumé.docx", ""]
        for name in ["id", "name", "title", "mimetype", "filetype", "mode"] where chance(45) {
            members.append((key(name), lenientString(name == "id" ? ["F01", "F0LDQ4T2Q"] : names)))
        }
        if chance(40) { members.append((key("size"), lenientInt())) }
        let urls = [
            "https://files.slack.com/files-pri/T1-F1/report.pdf",
            "https://files.slack.com/files-pri/T1-F1/report.pdf?t=xoxe-123&other=1",
            "https://acme.slack.com/files/U1/F1/report.pdf?pub_secret=abc",
            "https://files.slack.com/files-pri/T1-F1/a.png?t=xoxe-1", "https://files.slack.com/a.png?",
            #"https:\/\/files.slack.com\/a.png\u003ft=xoxe-2"#, "https://example.com/x?token=abc#top",
        ]
        for name in ["url_private", "url_private_download", "permalink"] where chance(40) {
            members.append((key(name), lenientString(urls)))
        }
        if chance(15) { members.append((unknownKey(), anyValue(depth: 2))) }
        return object(members)
    }

    private mutating func attachment() -> Node {
        var members: [(key: [UInt8], value: Node)] = []
        let keys = [
            "fallback", "pretext", "title", "text", "footer", "author_name", "title_link", "from_url", "original_url",
        ]
        for name in keys where chance(35) {
            members.append((key(name), lenientString(["", "https://example.com/a", "Build #42 passed"])))
        }
        if chance(35) {
            members.append((key("fields"), list { $0.names(["title", "value", "short"], common: ["", "1"]) }))
        }
        if chance(10) { members.append((unknownKey(), anyValue(depth: 2))) }
        return object(members)
    }

    /// A Block Kit element; `deep` chains go past the reference's depth limit (12).
    private mutating func block(depth: Int, deep: Bool) -> Node {
        guard chance(90) else { return anyValue(depth: 1) }
        var members: [(key: [UInt8], value: Node)] = []
        let types = [
            "rich_text", "section", "rich_text_section", "text", "user", "channel", "link", "emoji", "broadcast",
            "context", "mrkdwn", "plain_text", "rich_text_list",
        ]
        if chance(85) { members.append((key("type"), lenientString(types))) }
        if chance(25) { members.append((key("user_id"), lenientString(["U1", "U0CWRVRF4BH"]))) }
        if chance(20) { members.append((key("channel_id"), lenientString(["C1"]))) }
        if chance(20) { members.append((key("url"), lenientString(["https://example.com/?a=1&b=<2>"]))) }
        if chance(20) { members.append((key("name"), lenientString(["wave", "+1"]))) }
        if chance(15) { members.append((key("range"), lenientString(["here", "channel"]))) }
        if chance(50) {
            let nested = depth < 16 && chance(25)
            members.append((key("text"), nested ? block(depth: depth + 1, deep: deep) : lenientString([])))
        }
        let more = depth < 16 && (deep ? chance(90) : depth < 3 && chance(45))
        for name in ["elements", "fields", "blocks"] where more && chance(name == "elements" ? 80 : 15) {
            let count = deep ? 1 : roll(3)
            members.append((key(name), .array((0..<count).map { _ in block(depth: depth + 1, deep: deep) })))
        }
        if chance(10) { members.append((unknownKey(), anyValue(depth: 1))) }
        return object(members)
    }

    /// An object of string fields (`edited`, profiles, attachment fields), or sometimes another value.
    private mutating func names(_ keys: [String], common: [String]) -> Node {
        guard chance(85) else { return anyValue(depth: 2) }
        var members: [(key: [UInt8], value: Node)] = []
        for name in keys where chance(70) { members.append((key(name), lenientString(common))) }
        if chance(15) { members.append((unknownKey(), anyValue(depth: 1))) }
        return object(members)
    }

    /// An array of `element()`s (sometimes with stray values), or sometimes another value.
    private mutating func list(_ element: (inout MessageJSONFuzzer) -> Node) -> Node {
        guard chance(85) else { return anyValue(depth: 2) }
        return .array(
            (0..<roll(4)).map { _ in
                chance(85) ? element(&self) : anyValue(depth: 1)
            })
    }

    /// Shuffled members, sometimes with one of them repeated (the first occurrence counts).
    private mutating func object(_ members: [(key: [UInt8], value: Node)]) -> Node {
        var members = members
        members.shuffle(using: &rng)
        if !members.isEmpty, chance(6) {
            let repeated = members[roll(members.count)]
            members.append((repeated.key, chance(50) ? repeated.value : anyValue(depth: 1)))
        }
        return .object(members)
    }

    // MARK: - Keys

    /// A known key: usually plain, sometimes spelt with a `\u` escape, rarely undecodable (a lone surrogate).
    private mutating func key(_ name: String) -> [UInt8] {
        var bytes = Array(name.utf8)
        switch roll(100) {
        case 0..<4:
            let at = roll(bytes.count)
            let hex = String(bytes[at], radix: 16)
            let escape = Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            bytes.replaceSubrange(at...at, with: escape)
        case 4:
            bytes += Array(#"\ud800"#.utf8)
        default:
            break
        }
        return bytes
    }

    private mutating func unknownKey() -> [UInt8] {
        chance(90)
            ? key(pick(["client_msg_id", "team", "latest_reply", "replies", "is_locked", "x", "é", "Text", "ts "]))
            : stringContents()
    }

    // MARK: - Values

    /// A string field: usually a string (one of `common` or random), sometimes a number or another value.
    private mutating func lenientString(_ common: [String]) -> Node {
        switch roll(100) {
        case 0..<45 where !common.isEmpty: string(pick(common))
        case 0..<75: .token([UInt8(ascii: "\"")] + stringContents() + [UInt8(ascii: "\"")])
        case 75..<88: number()
        default: anyValue(depth: 2)
        }
    }

    /// An integer field: a number, a numeric (or not) string, a bool, or another value.
    private mutating func lenientInt() -> Node {
        switch roll(100) {
        case 0..<45: .token(Array(String(pick([0, 1, 3, 42, -7, 1_000_000, Int64.max, Int64.min])).utf8))
        case 45..<65: number()
        case 65..<80: string(pick(["12", "-3", "1.9", "1e2", " 5", "abc", "", "9223372036854775808", "0x1F"]))
        case 80..<88: .token(Array(pick(["true", "false"]).utf8))
        default: anyValue(depth: 2)
        }
    }

    private mutating func stringArray() -> Node {
        guard chance(85) else { return anyValue(depth: 2) }
        return .array((0..<roll(4)).map { _ in lenientString(["U1", "U0CWRVRF4BH", "C1"]) })
    }

    private mutating func number() -> Node {
        let tokens = [
            "0", "-0", "42", "-7", "1720048215", "1720048215.065355", "9223372036854775807", "9223372036854775808",
            "-9223372036854775809", "1.5", "1.0", "-2.50", "1e3", "1E+2", "2e-1", "1e400", "-1e400", "1e-400",
            "0.0", "123456789012345678901234567890", "1.7976931348623157e308", "9007199254740993",
            "9007199254740993.0", "1e19", "9.2233720368547758e18", "5e-324", "01", "1.", "-", "1e", "1.5e",
            "00", "-01",
        ]
        return .token(Array(pick(tokens).utf8))
    }

    private func string(_ text: String) -> Node {
        .token([UInt8(ascii: "\"")] + Array(text.utf8) + [UInt8(ascii: "\"")])
    }

    /// The bytes between a string's quotes: plain text, raw Unicode, escapes, and rarely what `JSONDecoder`
    /// refuses (lone or unpaired surrogates, bad escapes, control bytes, invalid UTF-8).
    private mutating func stringContents() -> [UInt8] {
        let plain = ["hello", "world", " ", "  ", "a", "Release 2.0", "&", "<", ">", "&amp;", "<@U1>", "x|y"]
        let unicode = [
            "é", "e\u{301}", "日本語", "😀", "👩‍💻", "\u{A0}", "\u{3000}", "\u{2003}", "\u{200B}", "ß", "İ", "\u{301}",
            "\u{200D}",
        ]
        let escapes = [
            #"\n"#, #"\""#, #"\\"#, #"\/"#, #"\t"#, #"\b"#, #"\f"#, #"\r"#, #"\u00e9"#, #"\u0041"#, #"\u0000"#,
            #"\ud83d\ude00"#, #"\uD83D\uDE00"#, #"\u3000"#, #"\u00A0"#, #"\u003c"#, #"\u0026"#, #"\ud834\udd1e"#,
        ]
        let refused: [[UInt8]] = [
            Array(#"\ud83d"#.utf8), Array(#"\ude00"#.utf8), Array(#"\ud83d\u0041"#.utf8),
            Array(#"\ud83d\ud83d"#.utf8), Array(#"\x"#.utf8), Array(#"\u12G4"#.utf8), Array(#"\U0041"#.utf8),
            [0x01], [0x0A], [0x1F], [0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xE2, 0x82],
        ]
        var out: [UInt8] = []
        for _ in 0..<roll(6) {
            switch roll(100) {
            case 0..<55: out += Array(pick(plain).utf8)
            case 55..<75: out += Array(pick(unicode).utf8)
            case 75..<96: out += Array(pick(escapes).utf8)
            default: out += pick(refused)
            }
        }
        return out
    }

    /// Any JSON value, containers at most `depth` deep.
    private mutating func anyValue(depth: Int) -> Node {
        switch roll(depth > 0 ? 10 : 7) {
        case 0, 1: return lenientString([])
        case 2, 3: return number()
        case 4: return .token(Array(pick(["true", "false"]).utf8))
        case 5, 6: return .token(Array("null".utf8))
        case 7, 8: return .array((0..<roll(3)).map { _ in anyValue(depth: depth - 1) })
        default: return .object((0..<roll(3)).map { _ in (unknownKey(), anyValue(depth: depth - 1)) })
        }
    }

    // MARK: - Writing

    private mutating func space(into out: inout [UInt8]) {
        guard chance(10) else { return }
        out += Array(pick([" ", "\n", "\t", "\r\n    ", "  "]).utf8)
    }

    /// Writes `node` with random whitespace between tokens and, rarely, a trailing comma (`JSONDecoder` takes it).
    private mutating func write(_ node: Node, into out: inout [UInt8]) {
        switch node {
        case .token(let bytes):
            out += bytes
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                space(into: &out)
                write(item, into: &out)
                space(into: &out)
            }
            if !items.isEmpty, chance(3) { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, member) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                space(into: &out)
                out.append(UInt8(ascii: "\""))
                out += member.key
                out.append(UInt8(ascii: "\""))
                space(into: &out)
                out.append(UInt8(ascii: ":"))
                space(into: &out)
                write(member.value, into: &out)
                space(into: &out)
            }
            if !members.isEmpty, chance(3) { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Breaks the text: a byte deleted or inserted, or the end cut off.
    private mutating func mutate(_ out: inout [UInt8]) {
        guard !out.isEmpty else { return }
        switch roll(3) {
        case 0: out.remove(at: roll(out.count))
        case 1: out.insert(pick(Array("\",:{}[]\\ 0an-".utf8)), at: roll(out.count + 1))
        default: out.removeLast(1 + roll(out.count))
        }
    }
}
