import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct MrkdwnTextTests {
    static let names: NameDirectory = {
        var names = NameDirectory()
        names.addUser(User(id: "U1", handle: "ann", realName: "Ann Lee", displayName: "annie"))
        names.addChannel(id: "C1", name: "general")
        return names
    }()

    @Test(arguments: [
        ("hi <@U1>", "hi @annie", "U1 ann Ann Lee annie"),
        ("hi <@U1|someone>", "hi @annie", "U1 ann Ann Lee annie"),
        ("hi <@U9|bob>", "hi @bob", "U9"),
        ("hi <@U9>", "hi @U9", ""),
        ("see <#C1|general>", "see #general", "C1"),
        ("see <#C1>", "see #general", "C1"),
        ("see <#C1|>", "see #general", "C1"),
        ("see <#C7>", "see #C7", "C7"),
        ("<!here> ship", "@here ship", ""),
        ("<!channel>", "@channel", ""),
        ("<!everyone>", "@everyone", ""),
        ("<!subteam^S1|@team> ping", "@team ping", ""),
        ("<!date^1392734382^{date}|Feb 18, 2014>", "Feb 18, 2014", ""),
        ("<https://x.y/z|the docs>", "the docs", "https://x.y/z"),
        ("<https://x.y/z>", "https://x.y/z", ""),
        ("<mailto:a@b.c|a@b.c>", "a@b.c", "mailto:a@b.c"),
        ("a &amp; b &lt;c&gt;", "a & b <c>", ""),
        ("`x &lt; 1` &amp;&amp;", "`x < 1` &&", ""),
        ("&amp;lt;", "&lt;", ""),
        (":tada: *bold* _it_ ~s~", ":tada: *bold* _it_ ~s~", ""),
        ("unclosed <https://x", "unclosed <https://x", ""),
        ("<>", "<>", ""),
        ("", "", ""),
    ])
    func rules(input: String, text: String, extra: String) {
        let result = MrkdwnText.normalize(input, names: Self.names)
        #expect(result.text == text)
        #expect(result.extra == extra)
    }

    @Test func linksAreFlagged() {
        #expect(MrkdwnText.normalize("<https://x.y|x>", names: Self.names).hasLink)
        #expect(MrkdwnText.normalize("<mailto:a@b.c>", names: Self.names).hasLink)
        #expect(!MrkdwnText.normalize("<@U1> <#C1>", names: Self.names).hasLink)
    }
}
