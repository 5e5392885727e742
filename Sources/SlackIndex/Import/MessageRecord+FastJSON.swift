import Foundation

// A hand-written decoder producing exactly what the Codable reference decoder produces with `JSONDecoder`, about
// ten times faster: keys are matched on their raw bytes, unneeded values are skipped without building anything, and
// Strings are created only for the fields kept. The reference (`ReferenceMessage` in
// `Tests/SlackIndexTestSupport/CodableMessageReference.swift`, the `init(from:)` this file replaced) is the
// specification: `FastJSONOracleTests` compares the two on every message of `sample-data/` and on generated cases.
//
// `JSONDecoder` behaviours reproduced here (all checked by `FastJSONOracleTests`):
// - a duplicated key: the first occurrence wins, whatever its type;
// - a string whose contents `JSONDecoder` refuses (bad escape, lone surrogate, control byte, invalid UTF-8) reads
//   as absent, like a value of the wrong type — except the message's `text`, which is kept with what cannot be
//   represented replaced (`textRepaired`; the reference would have stored it empty);
// - numbers are validated only when read: a malformed one (`01`, `1.`) reads as absent;
// - a trailing comma before `}` or `]` is accepted.

extension MessageRecord {
    /// Decodes one message object (the minified bytes of one element of a day file).
    ///
    /// A `message_changed` record's revision is decoded into `changedMessage`, and `innerMessageRange` says where
    /// its object lies in `json`, so callers need not look for it again.
    ///
    /// Produces the same values as the Codable reference for every input `JSONDecoder` accepts (checked by
    /// `FastJSONOracleTests`). Inside values it skips it checks only strings and brackets (`JSONCursor.skipValue()`),
    /// so it also reads some inputs `JSONDecoder` refuses.
    /// - Throws: `JSONCursorError` when the bytes are not one JSON object (the element is not a message).
    /// - Complexity: O(n) in the element's length; `message_changed` nesting is decoded without recursion.
    package init(json: UnsafeBufferPointer<UInt8>) throws {
        var cursor = JSONCursor(json)
        guard try cursor.peek() == UInt8(ascii: "{") else {
            throw JSONCursorError(.unexpectedByte(try cursor.peek()), at: cursor.index)
        }
        // Each level and the range of the object nested in it (the next level, when that one decodes).
        var levels: [(record: MessageRecord, nested: Range<Int>?)] = []
        var next: Int? = cursor.index
        while let start = next {
            var inner = cursor
            inner.index = start
            let parsed = try MessageRecord.parseObject(&inner)
            if levels.isEmpty {
                // JSONDecoder cannot open an object with an undecodable key: not a message.
                guard parsed != nil else { throw JSONCursorError(.unexpectedByte(UInt8(ascii: "\"")), at: start) }
                cursor = inner
            }
            guard let parsed else { break }  // The nested version reads as absent.
            levels.append(parsed)
            next = parsed.nested?.lowerBound
        }
        guard cursor.isAtEnd() else {
            throw JSONCursorError(.unexpectedByte(try cursor.peek()), at: cursor.index)
        }
        // Fold the chain of `message_changed` versions from the innermost outwards.
        guard var folded = levels.popLast()?.record else { throw JSONCursorError(.unexpectedEnd, at: 0) }
        while let (record, nested) = levels.popLast() {
            var outer = record
            outer.changedMessage = [folded]
            outer.innerMessageRange = nested
            folded = outer
        }
        self = folded
    }

    /// The message object at the cursor, without `changedMessage`, and the range of the object to decode into it;
    /// nil when a key is undecodable (the object is consumed either way).
    /// Over 60 lines: one switch over the message's keys, on the import's hottest path (checked against the
    /// Codable reference by `FastJSONOracleTests`); a function per key would re-enter the cursor per field.
    private static func parseObject(
        _ c: inout JSONCursor
    ) throws(JSONCursorError) -> (record: MessageRecord, nested: Range<Int>?)? {
        var type: String?
        var subtype: String?
        var ts: String?
        var user: String?
        var botID: String?
        var username: String?
        var text: String?
        var textRepaired = false
        var threadTS: String?
        var replyCount: Int64?
        var editedTS: String?
        var editedUser: String?
        var reactions: [ReactionRecord] = []
        var files: [PreparedFile] = []
        var legacyFile: PreparedFile?
        var attachments: [AttachmentRecord] = []
        var blocksAt: Int?
        var isPinned = false
        var deletedTS: String?
        var channel: String?
        var userProfile: (handle: String?, realName: String?, displayName: String?)?
        var botProfileHandle: String??
        var messageRange: Range<Int>?
        var profileMember: Range<Int>?

        var seen: UInt32 = 0
        var first = true
        var decodableKeys = true
        try c.beginObject()
        while let rawKey = try c.nextKey(first: &first) {
            if !rawKey.isPlain && !c.isDecodable(rawKey) { decodableKeys = false }
            let key = c.classify(rawKey, MessageKey.classify)
            // The first member whose key's bytes are `user_profile`, from its key's quote to its value's end: what
            // `JSONSlicer.text(of:in:removing:)` finds by scanning the object again.
            let profileStart = key == .userProfile && rawKey.isPlain && profileMember == nil ? rawKey.start - 1 : nil
            defer { if let profileStart { profileMember = profileStart..<c.index } }
            if key != .other {
                let bit: UInt32 = 1 << key.rawValue
                if seen & bit != 0 {
                    try c.skipValue()
                    continue
                }
                seen |= bit
            }
            switch key {
            case .type: type = try c.readLenientString()
            case .subtype: subtype = try c.readLenientString()
            case .ts: ts = try c.readLenientString()
            case .user: user = try c.readLenientString()
            case .botID: botID = try c.readLenientString()
            case .username: username = try c.readLenientString()
            case .text: text = try c.readMessageText(repaired: &textRepaired)
            case .threadTS: threadTS = try c.readLenientString()
            case .replyCount: replyCount = try c.readLenientInt()
            case .edited:
                if let names = try c.readNamesIfObject(EditedKey.classify) {
                    editedTS = names.0
                    editedUser = names.1
                }
            case .reactions:
                reactions = try c.readLossyArray { c throws(JSONCursorError) in try ReactionRecord.parse(&c) }
            case .files: files = try c.readLossyArray { c throws(JSONCursorError) in try PreparedFile.parse(&c) }
            case .file: legacyFile = try PreparedFile.parse(&c)
            case .attachments:
                attachments = try c.readLossyArray { c throws(JSONCursorError) in try AttachmentRecord.parse(&c) }
            case .blocks:
                blocksAt = try c.valueStart()
                try c.skipValue()
            case .pinnedTo: isPinned = try c.readStringArrayIsEmpty() == false
            case .deletedTS: deletedTS = try c.readLenientString()
            case .channel: channel = try c.readLenientString()
            case .userProfile:
                if let names = try c.readNamesIfObject(ProfileKey.classify) { userProfile = names }
            case .botProfile:
                if let names = try c.readNamesIfObject(ProfileKey.classify) { botProfileHandle = .some(names.0) }
            case .message:
                let start = try c.valueStart()
                try c.skipValue()
                if c.bytes[start] == UInt8(ascii: "{") { messageRange = start..<c.index }
            case .other:
                try c.skipValue()
            }
        }

        guard decodableKeys else { return nil }
        let body = text ?? ""
        var blockText: String?
        if body.isEmpty, let blocksAt {
            var blocks = c
            blocks.index = blocksAt
            blockText = try BlockTextReader.text(ofBlocksAt: &blocks)
        }
        if files.isEmpty, let legacyFile { files = [legacyFile] }
        let record = MessageRecord(
            type: type, subtype: subtype, ts: ts, user: user, botID: botID, username: username, text: body,
            threadTS: threadTS, replyCount: replyCount, editedTS: editedTS, editedUser: editedUser,
            reactions: reactions, files: files, attachments: attachments, blockText: blockText, isPinned: isPinned,
            deletedTS: deletedTS, channel: channel,
            profileHandle: userProfile != nil ? userProfile?.handle : botProfileHandle ?? nil,
            profileRealName: userProfile?.realName, profileDisplayName: userProfile?.displayName,
            changedMessage: [], textRepaired: textRepaired, profileMember: profileMember)
        return (record, subtype == "message_changed" ? messageRange : nil)
    }
}

// MARK: - Keys

/// The message keys the decoder reads (`other` for the rest).
private enum MessageKey: UInt8 {
    case type, subtype, ts, user, botID, username, text, threadTS, replyCount, edited, reactions, files, file,
        attachments, blocks, pinnedTo, deletedTS, channel, userProfile, message, botProfile, other

    static func classify(_ p: UnsafeBufferPointer<UInt8>) -> MessageKey {
        switch p.count {
        case 2:
            if p.matches("ts") { return .ts }
        case 4:
            if p.matches("text") { return .text }
            if p.matches("type") { return .type }
            if p.matches("user") { return .user }
            if p.matches("file") { return .file }
        case 5:
            if p.matches("files") { return .files }
        case 6:
            if p.matches("blocks") { return .blocks }
            if p.matches("edited") { return .edited }
            if p.matches("bot_id") { return .botID }
        case 7:
            if p.matches("subtype") { return .subtype }
            if p.matches("channel") { return .channel }
            if p.matches("message") { return .message }
        case 8:
            if p.matches("username") { return .username }
        case 9:
            if p.matches("thread_ts") { return .threadTS }
            if p.matches("reactions") { return .reactions }
            if p.matches("pinned_to") { return .pinnedTo }
        case 10:
            if p.matches("deleted_ts") { return .deletedTS }
        case 11:
            if p.matches("reply_count") { return .replyCount }
            if p.matches("attachments") { return .attachments }
            if p.matches("bot_profile") { return .botProfile }
        case 12:
            if p.matches("user_profile") { return .userProfile }
        default:
            break
        }
        return .other
    }
}

/// `edited`'s keys, as slots of `readNames`.
private enum EditedKey {
    static func classify(_ p: UnsafeBufferPointer<UInt8>) -> Int {
        if p.count == 2, p.matches("ts") { return 0 }
        if p.count == 4, p.matches("user") { return 1 }
        return -1
    }
}

/// `user_profile` / `bot_profile`'s keys, as slots of `readNames`.
private enum ProfileKey {
    static func classify(_ p: UnsafeBufferPointer<UInt8>) -> Int {
        switch p.count {
        case 4: if p.matches("name") { return 0 }
        case 9: if p.matches("real_name") { return 1 }
        case 12: if p.matches("display_name") { return 2 }
        default: break
        }
        return -1
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// True when the buffer starts with `literal`'s bytes (callers check the length first).
    @inline(__always) fileprivate func matches(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard count >= n else { return false }
        let q = literal.utf8Start
        for k in 0..<n where self[k] != q[k] { return false }
        return true
    }
}

// MARK: - Lenient readers

extension JSONCursor {
    /// Classifies a key by its decoded bytes; a key with escapes is decoded first (rare).
    @inline(__always)
    fileprivate func classify<K>(_ raw: JSONRawString, _ classify: (UnsafeBufferPointer<UInt8>) -> K) -> K {
        if !raw.hasEscapes { return classify(contents(of: raw)) }
        // JSONDecoder refuses a document with an undecodable key; any answer will do then.
        let decoded = Array((string(raw) ?? "").utf8)
        return decoded.withUnsafeBufferPointer { classify($0) }
    }

    /// The offset of the next value (after whitespace).
    @inline(__always) fileprivate mutating func valueStart() throws(JSONCursorError) -> Int {
        _ = try peek()
        return index
    }

    /// A string field as the importer reads it: a string, or a number's text; nil for anything else.
    @inline(__always) fileprivate mutating func readLenientString() throws(JSONCursorError) -> String? {
        switch try peek() {
        case UInt8(ascii: "\""):
            return string(try readRawString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNumber.lenientText(try readNumberToken())
        default:
            try skipValue()
            return nil
        }
    }

    /// A message's text: like `readLenientString()`, but a string `JSONDecoder` would refuse (a raw control byte,
    /// invalid or overlong UTF-8, a lone surrogate, a bad escape) is kept, with only what cannot be represented
    /// replaced by U+FFFD; NUL, which SQLite's C strings would cut the text at, becomes U+FFFD too. `repaired`
    /// tells the importer to count it.
    fileprivate mutating func readMessageText(repaired: inout Bool) throws(JSONCursorError) -> String? {
        guard try peek() == UInt8(ascii: "\"") else { return try readLenientString() }
        let raw = try readRawString()
        if raw.isPlain { return string(raw) }
        var text = string(raw) ?? {
            repaired = true
            return repairedString(raw)
        }()
        if text.utf8Contains(0) {
            repaired = true
            text = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
        }
        return text
    }

    /// An integer field as the importer reads it: a number, a numeric string, or a bool as 1/0.
    fileprivate mutating func readLenientInt() throws(JSONCursorError) -> Int64? {
        switch try peek() {
        case UInt8(ascii: "\""):
            guard let text = string(try readRawString()) else { return nil }
            return Int64(text) ?? Double(text).flatMap(JSONNumber.truncating)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let token = try readNumberToken()
            return JSONNumber.int64(token) ?? JSONNumber.double(token).flatMap(JSONNumber.truncating)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return try readBool() ? 1 : 0
        default:
            try skipValue()
            return nil
        }
    }

    /// An array of strings (numbers read as their text, other elements dropped); empty when not an array.
    fileprivate mutating func readStringArray() throws(JSONCursorError) -> [String] {
        guard try peek() == UInt8(ascii: "[") else {
            try skipValue()
            return []
        }
        try beginArray()
        var out: [String] = []
        var first = true
        while try nextElement(first: &first) {
            if let value = try readLenientString() { out.append(value) }
        }
        return out
    }

    /// True when `readStringArray()` would be empty.
    fileprivate mutating func readStringArrayIsEmpty() throws(JSONCursorError) -> Bool {
        try readStringArray().isEmpty
    }

    /// The array's elements that `parse` accepts; empty when the value is not an array.
    @inline(__always)
    fileprivate mutating func readLossyArray<T>(
        _ parse: (inout JSONCursor) throws(JSONCursorError) -> T?
    ) throws(JSONCursorError) -> [T] {
        guard try peek() == UInt8(ascii: "[") else {
            try skipValue()
            return []
        }
        try beginArray()
        var out: [T] = []
        var first = true
        while try nextElement(first: &first) {
            if let value = try parse(&self) { out.append(value) }
        }
        return out
    }

    /// Up to three lenient strings of the object at the cursor, by the slot `classify` gives their key (first wins);
    /// nil when the value is not an object JSONDecoder can open (consumed either way).
    fileprivate mutating func readNamesIfObject(
        _ classify: (UnsafeBufferPointer<UInt8>) -> Int
    ) throws(JSONCursorError) -> (String?, String?, String?)? {
        guard try peek() == UInt8(ascii: "{") else {
            try skipValue()
            return nil
        }
        var values: (String?, String?, String?) = (nil, nil, nil)
        var seen = 0
        var first = true
        var decodableKeys = true
        try beginObject()
        while let rawKey = try nextKey(first: &first) {
            if !rawKey.isPlain && !isDecodable(rawKey) { decodableKeys = false }
            let slot = self.classify(rawKey, classify)
            guard slot >= 0, seen & (1 << slot) == 0 else {
                try skipValue()
                continue
            }
            seen |= 1 << slot
            let value = try readLenientString()
            switch slot {
            case 0: values.0 = value
            case 1: values.1 = value
            default: values.2 = value
            }
        }
        return decodableKeys ? values : nil
    }
}

// MARK: - Reactions, files, attachments

extension ReactionRecord {
    /// The reaction object at the cursor, or nil when the reference would throw (not an object, no name).
    fileprivate static func parse(_ c: inout JSONCursor) throws(JSONCursorError) -> ReactionRecord? {
        guard try c.peek() == UInt8(ascii: "{") else {
            try c.skipValue()
            return nil
        }
        var name: String?
        var count: Int64?
        var users: [String] = []
        var seen = 0
        var first = true
        var decodableKeys = true
        try c.beginObject()
        while let rawKey = try c.nextKey(first: &first) {
            if !rawKey.isPlain && !c.isDecodable(rawKey) { decodableKeys = false }
            let slot = c.classify(rawKey) { p -> Int in
                switch p.count {
                case 4: return p.matches("name") ? 0 : -1
                case 5: return p.matches("count") ? 1 : p.matches("users") ? 2 : -1
                default: return -1
                }
            }
            guard slot >= 0, seen & (1 << slot) == 0 else {
                try c.skipValue()
                continue
            }
            seen |= 1 << slot
            switch slot {
            case 0: name = try c.readLenientString()
            case 1: count = try c.readLenientInt()
            default: users = try c.readStringArray()
            }
        }
        guard decodableKeys, let name, !name.isEmpty else { return nil }
        return ReactionRecord(name: name, count: Int(count ?? Int64(users.count)), users: users)
    }
}

extension PreparedFile {
    /// The file object at the cursor, or nil when the reference would throw (not an object; no id, name, title).
    fileprivate static func parse(_ c: inout JSONCursor) throws(JSONCursorError) -> PreparedFile? {
        guard try c.peek() == UInt8(ascii: "{") else {
            try c.skipValue()
            return nil
        }
        var strings = [String?](repeating: nil, count: 9)
        var size: Int64?
        var seen = 0
        var first = true
        var decodableKeys = true
        try c.beginObject()
        while let rawKey = try c.nextKey(first: &first) {
            if !rawKey.isPlain && !c.isDecodable(rawKey) { decodableKeys = false }
            // Slots: 0 id, 1 name, 2 title, 3 mimetype, 4 filetype, 5 mode, 6-8 URLs, 9 size.
            let slot = c.classify(rawKey) { p -> Int in
                switch p.count {
                case 2: return p.matches("id") ? 0 : -1
                case 4: return p.matches("name") ? 1 : p.matches("mode") ? 5 : p.matches("size") ? 9 : -1
                case 5: return p.matches("title") ? 2 : -1
                case 8: return p.matches("mimetype") ? 3 : p.matches("filetype") ? 4 : -1
                case 9: return p.matches("permalink") ? 8 : -1
                case 11: return p.matches("url_private") ? 6 : -1
                case 20: return p.matches("url_private_download") ? 7 : -1
                default: return -1
                }
            }
            guard slot >= 0, seen & (1 << slot) == 0 else {
                try c.skipValue()
                continue
            }
            seen |= 1 << slot
            if slot == 9 {
                size = try c.readLenientInt()
            } else {
                strings[slot] = try c.readLenientString()
            }
        }
        guard decodableKeys else { return nil }
        if strings[0] == nil && strings[1] == nil && strings[2] == nil { return nil }
        var file = PreparedFile()
        file.id = strings[0]
        file.name = strings[1]
        file.title = strings[2]
        file.mimetype = strings[3]
        file.filetype = strings[4]
        file.size = size
        file.mode = strings[5]
        file.urlPrivate = strings[6].map(scrubbed)
        file.urlPrivateDownload = strings[7].map(scrubbed)
        file.permalink = strings[8].map(scrubbed)
        return file
    }
}

/// `URLScrubber.strippingTokens`, skipped for the common URL without a query.
private func scrubbed(_ url: String) -> String {
    url.utf8Contains(UInt8(ascii: "?")) ? URLScrubber.strippingTokens(url) : url
}

extension AttachmentRecord {
    /// The attachment object at the cursor, or nil when it is not an object.
    fileprivate static func parse(_ c: inout JSONCursor) throws(JSONCursorError) -> AttachmentRecord? {
        guard try c.peek() == UInt8(ascii: "{") else {
            try c.skipValue()
            return nil
        }
        // Slots: 0 author_name, 1 pretext, 2 title, 3 text, 4 fallback, 5 footer, 6 title_link, 7 from_url,
        // 8 original_url, 9 fields.
        var strings = [String?](repeating: nil, count: 9)
        var fields: [String] = []
        var seen = 0
        var first = true
        var decodableKeys = true
        try c.beginObject()
        while let rawKey = try c.nextKey(first: &first) {
            if !rawKey.isPlain && !c.isDecodable(rawKey) { decodableKeys = false }
            let slot = c.classify(rawKey) { p -> Int in
                switch p.count {
                case 4: return p.matches("text") ? 3 : -1
                case 5: return p.matches("title") ? 2 : -1
                case 6: return p.matches("footer") ? 5 : p.matches("fields") ? 9 : -1
                case 7: return p.matches("pretext") ? 1 : -1
                case 8: return p.matches("fallback") ? 4 : p.matches("from_url") ? 7 : -1
                case 10: return p.matches("title_link") ? 6 : -1
                case 11: return p.matches("author_name") ? 0 : -1
                case 12: return p.matches("original_url") ? 8 : -1
                default: return -1
                }
            }
            guard slot >= 0, seen & (1 << slot) == 0 else {
                try c.skipValue()
                continue
            }
            seen |= 1 << slot
            if slot == 9 {
                fields = try c.readLossyArray { c throws(JSONCursorError) -> [String]? in
                    let parts = try c.readNamesIfObject { p -> Int in
                        switch p.count {
                        case 5: return p.matches("title") ? 0 : p.matches("value") ? 1 : -1
                        default: return -1
                        }
                    }
                    guard let parts else { return nil }
                    return [parts.0, parts.1].compactMap { $0 }.filter { !$0.isEmpty }
                }.flatMap { $0 }
            } else {
                strings[slot] = try c.readLenientString()
            }
        }
        guard decodableKeys else { return nil }
        var pieces: [String] = []
        for slot in 0..<4 {
            if let value = strings[slot], !value.isEmpty { pieces.append(value) }
        }
        pieces.append(contentsOf: fields)
        if pieces.isEmpty, let fallback = strings[4], !fallback.isEmpty { pieces.append(fallback) }
        if let footer = strings[5], !footer.isEmpty { pieces.append(footer) }
        return AttachmentRecord(pieces: pieces, hasLink: strings[6] != nil || strings[7] != nil || strings[8] != nil)
    }
}

// MARK: - Blocks

/// Text gathered from Block Kit blocks as the reference's `ReferenceBlockText` gathers it (used when `text` is empty).
private enum BlockTextReader {
    /// The keys `collect` reads, as slots.
    private static func slot(_ p: UnsafeBufferPointer<UInt8>) -> Int {
        switch p.count {
        case 3: return p.matches("url") ? 3 : -1
        case 4:
            if p.matches("type") { return 0 }
            if p.matches("text") { return 4 }
            if p.matches("name") { return 5 }
            return -1
        case 5: return p.matches("range") ? 6 : -1
        case 6: return p.matches("fields") ? 8 : p.matches("blocks") ? 9 : -1
        case 7: return p.matches("user_id") ? 1 : -1
        case 8: return p.matches("elements") ? 7 : -1
        case 10: return p.matches("channel_id") ? 2 : -1
        default: return -1
        }
    }

    /// The message's `blockText` from the `blocks` value at the cursor: the blocks' texts joined by spaces and
    /// trimmed, nil when empty.
    static func text(ofBlocksAt c: inout JSONCursor) throws(JSONCursorError) -> String? {
        guard try c.peek() == UInt8(ascii: "[") else { return nil }
        try c.beginArray()
        var joined = ""
        var first = true
        var isFirstBlock = true
        while try c.nextElement(first: &first) {
            if !isFirstBlock { joined += " " }
            isFirstBlock = false
            try collect(&c, into: &joined, depth: 0)
        }
        let trimmed = trimmingWhitespace(joined)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Appends the text of the value at the cursor and consumes it (`ReferenceBlockText.collect`).
    /// Over 60 lines: one recursive walk over blocks and attachments that appends text as it goes; each case is
    /// a JSON shape of Slack's, and splitting them would thread the cursor and output through every call.
    private static func collect(_ c: inout JSONCursor, into out: inout String, depth: Int) throws(JSONCursorError) {
        guard depth < 12, try c.peek() == UInt8(ascii: "{") else {
            try c.skipValue()
            return
        }
        // Offsets of the values of: type, user_id, channel_id, url, text, name, range, elements, fields, blocks.
        var at = [Int](repeating: -1, count: 10)
        var first = true
        var decodableKeys = true
        try c.beginObject()
        while let rawKey = try c.nextKey(first: &first) {
            if !rawKey.isPlain && !c.isDecodable(rawKey) { decodableKeys = false }
            let slot = c.classify(rawKey, slot)
            if slot >= 0, at[slot] < 0 { at[slot] = try c.valueStart() }
            try c.skipValue()
        }
        guard decodableKeys else { return }
        var reader = c
        func lenient(_ slot: Int) throws(JSONCursorError) -> String? {
            guard at[slot] >= 0 else { return nil }
            reader.index = at[slot]
            return try reader.readLenientString()
        }
        let type = try lenient(0)
        switch type {
        case "user":
            if let id = try lenient(1) { out += "<@\(id)>" }
        case "channel":
            if let id = try lenient(2) { out += "<#\(id)>" }
        case "link":
            if let url = try lenient(3) {
                let label = try lenient(4)
                out += label.map { "<\(url)|\($0)>" } ?? "<\(url)>"
            }
            return
        case "emoji":
            if let name = try lenient(5) { out += ":\(name):" }
        case "broadcast":
            if let range = try lenient(6) { out += "<!\(range)>" }
        default:
            break
        }
        if let text = try lenient(4) {
            out += escape(text)
        } else if at[4] >= 0 {
            reader.index = at[4]
            try collect(&reader, into: &out, depth: depth + 1)
        }
        for slot in 7...9 where at[slot] >= 0 {
            reader.index = at[slot]
            guard try reader.peek() == UInt8(ascii: "[") else { continue }
            try reader.beginArray()
            var firstElement = true
            while try reader.nextElement(first: &firstElement) {
                try collect(&reader, into: &out, depth: depth + 1)
            }
            if slot != 7 || type == "rich_text" || type == "section" { out += " " }
        }
    }

    /// `&`, `<`, `>` as entities; byte-wise unless one touches a non-ASCII scalar (then Foundation's own rules).
    private static func escape(_ text: String) -> String {
        let special: (found: Bool, ambiguous: Bool) = text.utf8.withContiguousStorageIfAvailable { p -> (Bool, Bool) in
            var found = false
            for k in 0..<p.count {
                let b = p[k]
                guard b == UInt8(ascii: "&") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">") else { continue }
                found = true
                if (k > 0 && p[k - 1] >= 0x80) || (k + 1 < p.count && p[k + 1] >= 0x80) { return (true, true) }
            }
            return (found, false)
        } ?? (true, true)
        guard special.found else { return text }
        if special.ambiguous {
            return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count + 16)
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            default: out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `trimmingCharacters(in: .whitespaces)`: byte-wise for ASCII edges, Foundation's otherwise.
    private static func trimmingWhitespace(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var lower = 0
        var upper = bytes.count
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        if lower == upper { return "" }
        guard bytes[lower] < 0x80, bytes[upper - 1] < 0x80 else {
            return text.trimmingCharacters(in: .whitespaces)
        }
        if lower == 0 && upper == bytes.count { return text }
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }
}
