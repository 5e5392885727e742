import Testing

@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `utf8Contains` answers as `utf8.contains` does, for small (inline) and large strings, any byte.
@Suite struct StringBytesTests {
    @Test(arguments: [
        "", "a", "a\u{0}b", "\u{0}", "ts=1700000000.000100", "1700000000.000100?",
        String(repeating: "x", count: 300) + "\u{0}",
        "caf\u{E9} \u{2028} <&> ?", String(repeating: "\u{6771}\u{4EAC}", count: 40) + "&amp;",
    ])
    func agreesWithTheView(text: String) {
        for byte: UInt8 in [0, UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "x"), 0xE2, 0xA8, 0xFF] {
            #expect(text.utf8Contains(byte) == text.utf8.contains(byte), "byte \(byte) in \(text.debugDescription)")
        }
    }
}
