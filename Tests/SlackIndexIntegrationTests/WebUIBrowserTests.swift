import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import NIOHTTP1
import SlackIndex
import Testing

@testable import SlackIndexStore
@testable import SlackIndexTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `serve`'s web UI flags as users run them: `--ui off`, `--open` and their checks.
@Suite struct WebUICLITests {
    /// Starts `serve` and reads `lines` lines of what it prints.
    static func serve(db: String, extra: [String], lines: Int) throws -> (ServeCLITests.Server, [String], Pipe) {
        let (process, out, err) = try CLITests.launch(
            executable: try #require(CLITests.binary, "build the slackindex executable first"),
            ["--db", db, "serve", "--listen", "127.0.0.1:0"] + extra)
        var text = Data()
        while text.filter({ $0 == UInt8(ascii: "\n") }).count < lines {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let printed = String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
        let url = printed.first.flatMap { $0.components(separatedBy: " at ").last } ?? ""
        return (ServeCLITests.Server(process: process, url: url, stderr: err), printed, out)
    }

    static func get(_ url: String, cookie: String? = nil) async throws -> (status: UInt, setCookie: String?, body: String) {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = http.shutdown() }
        var request = HTTPClientRequest(url: url)
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, response.headers.first(name: "Set-Cookie"), String(buffer: body))
    }

    /// The link in the lines `serve --open` printed.
    static func link(in lines: [String]) throws -> String {
        let prefix = "Sign in once at "
        return try #require(lines.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
    }

    @Test func openPrintsAOneTimeSignInLinkAndANewOneOnSIGUSR1() async throws {
        let db = try ServeCLITests.importSample()
        let (server, lines, out) = try Self.serve(db: db, extra: ["--open"], lines: 4)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[0].hasPrefix("Serving \(db) at http://127.0.0.1:") && lines[0].hasSuffix("/api/"))
        let base = String(server.url.dropLast("api/".count))
        #expect(lines[1] == "Web UI at \(base)")
        let link = try Self.link(in: lines)
        #expect(link.hasPrefix(base + "ui/signin?code="))
        #expect(lines[3] == "A new sign-in link: kill -USR1 \(server.process.processIdentifier)")
        let first = try await Self.get(link)
        #expect(first.status == 303)
        let cookie = try #require(first.setCookie?.split(separator: ";").first.map(String.init))
        let page = try await Self.get(base, cookie: cookie)
        #expect(page.body.contains("/ui/app.js"))
        let again = try await Self.get(link)
        #expect(again.status == 401 && again.setCookie == nil, "the link works once")
        #expect(again.body.contains("kill -USR1"), "the page says how to get a new link")
        // SIGUSR1: a new link, without a restart (the signal's default action would end the process).
        kill(server.process.processIdentifier, SIGUSR1)
        var text = Data()
        while !text.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let fresh = try Self.link(in: String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init))
        #expect(fresh.hasPrefix(base + "ui/signin?code=") && fresh != link)
        let second = try await Self.get(fresh)
        #expect(second.status == 303 && second.setCookie != nil)
        #expect(server.stop() == 0)
    }

    /// Without --open, SIGUSR1 says there is no link and the server keeps serving.
    @Test func sigusr1WithoutOpenExplainsAndKeepsServing() async throws {
        let db = try ServeCLITests.importSample()
        let (server, _, _) = try Self.serve(db: db, extra: [], lines: 2)
        kill(server.process.processIdentifier, SIGUSR1)
        var said = ""
        while !said.contains("No sign-in link") {
            let chunk = server.stderr.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the process ended
            said += String(decoding: chunk, as: UTF8.self)
        }
        #expect(said.contains("No sign-in link: serve prints one only when started with --open"), "\(said)")
        #expect(try await Self.get(server.url + "api.test").status == 200)
        #expect(server.stop() == 0)
    }

    /// `--as` (or `$SLACKINDEX_ME`) makes the owner's session a user: `from:me` and the name shown are theirs.
    @Test func openAsAUserSignsTheOwnerInAsThatUser() async throws {
        let db = try ServeCLITests.importSample()
        let me = APIFixture.dmMembers[0]
        let (server, lines, _) = try Self.serve(db: db, extra: ["--open", "--as", me], lines: 3)
        let base = String(server.url.dropLast("api/".count))
        let link = try Self.link(in: lines)
        let cookie = try #require(try await Self.get(link).setCookie?.split(separator: ";").first.map(String.init))
        let auth = try await Self.get(base + "api/auth.test", cookie: cookie)
        #expect(auth.body.contains(#""user_id":"\#(me)""#), "\(auth.body)")
        #expect(server.stop() == 0)

        let unknown = try await CLITests.run(["--db", db, "serve", "--listen", "127.0.0.1:0", "--open", "--as", "nobody-at-all"])
        #expect(unknown.status != 0 && unknown.stderr.contains("nobody-at-all"), "\(unknown.stderr)")
    }

    @Test func uiOffServesTheAPIAlone() async throws {
        let db = try ServeCLITests.importSample()
        let (server, lines, out) = try Self.serve(db: db, extra: ["--ui", "off"], lines: 1)
        #expect(lines.count == 1)
        let base = String(server.url.dropLast("api/".count))
        #expect(try await Self.get(base).status == 404)
        #expect(try await Self.get(base + "ui/app.js").status == 404)
        #expect(try await Self.get(server.url + "auth.test").body.contains("not_authed"))
        #expect(server.stop() == 0)
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!(lines.joined() + rest).contains("Web UI"), "no UI line: \(lines) \(rest)")
    }

    @Test(arguments: [
        (["--open", "--ui", "off"], "--open signs in to the web UI: it needs --ui on."),
        (["--open", "--listen", "0.0.0.0:8080"], "--open prints a sign-in link with an admin's view"),
        (["--ui", "maybe"], "--ui"),
        (["--as", "someone"], "--as names the owner's session: it needs --open."),
        (["--remote-deadline", "3"], "--remote-deadline is how long search waits for --remote: it needs --remote URL."),
    ])
    func flagsAreChecked(arguments: [String], message: String) throws {
        let run = try CLITests.run(["serve"] + arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}

/// The web UI in a real browser: `scripts/web_ui_browser.py` drives headless Chromium through selenium against
/// `slackindex serve` on sample-data plus messages that carry markup.
///
/// Runs when python3 has selenium and chromedriver is on the PATH; with `SLACKINDEX_REQUIRE_BROWSER=1` (CI) it
/// always runs and fails when they are missing. Screenshots go to `SLACKINDEX_SCREENSHOTS` (a folder; the
/// README's are made with `SLACKINDEX_SCREENSHOTS=docs`), else to a temporary folder.
@Suite struct WebUIBrowserTests {
    static let required = ProcessInfo.processInfo.environment["SLACKINDEX_REQUIRE_BROWSER"] == "1"
    static let available: Bool =
        (try? SlackSDKClientTests.python(["-c", "import selenium"]).status) == 0
        && ((try? CLITests.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["which", "chromedriver"]).status) == 0)

    /// Messages whose text is markup: they must show as text.
    static let xss = [
        ("1716000000.000100", "<script>alert(1)</script>"),
        ("1716000000.000200", "<img src=x onerror=document.body.dataset.xss=1>"),
        ("1716000000.000300", "&lt;img src=x onerror=document.body.dataset.xss=2&gt; and <javascript:alert(1)|click>"),
    ]

    /// Messages that carry what the timeline renders: mrkdwn, a mention, @here, an emoji, an edit, a reaction, a
    /// file; an app's message; a join; a quote, a list, a code block and a channel; a thread broadcast.
    static func rendered(user: String, general: String) -> [[String: Any]] {
        [
            [
                "type": "message", "user": user, "ts": "1716000000.000401",
                "text": "*bold* _slanted_ ~gone~ `code` <https://example.com/x|a link> <@\(APIFixture.dmMembers[1])> <!here> :tada: :partyparrot:",
                "edited": ["user": user, "ts": "1716000001.000000"],
                "reactions": [
                    ["name": "tada", "count": 2, "users": APIFixture.dmMembers], ["name": "yay", "count": 1, "users": [user]],
                ],
                "files": [
                    ["id": "F0UITEST", "name": "report.pdf", "size": 123_456, "permalink": fileLink],
                    ["id": "F0UIIMAGE", "name": "chart.png", "mimetype": "image/png", "size": storedImage.count],
                ],
            ],
            ["type": "message", "subtype": "bot_message", "bot_id": "B0UITEST", "username": "deploybot",
             "ts": "1716000000.000402", "text": "Deployed"],
            ["type": "message", "subtype": "channel_join", "user": user, "ts": "1716000000.000403",
             "text": "<@\(user)> has joined the channel"],
            ["type": "message", "user": user, "ts": "1716000000.000404",
             "text": "&gt; quoted line\n• first\n• second\n```let x = 1 &lt; 2```\nsee <#\(general)|general>"],
            ["type": "message", "subtype": "thread_broadcast", "user": user, "ts": "1716000000.000405",
             "thread_ts": longThread, "text": "broadcast to the channel"],
        ]
    }

    static let fileLink = "https://acme.slack.com/files/U0UITEST/F0UITEST/report.pdf"

    /// Whether the system has a font that draws emoji (fontconfig asked for 🎉): the UI shows `:name:` without.
    static var systemDrawsEmoji: Bool {
        let run = try? CLITests.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["fc-list", ":charset=1f389"])
        return run.map { $0.status == 0 && !$0.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty } ?? false
    }

    /// A 40×30 red PNG: the image the archive's file store holds for `F0UIIMAGE`.
    static let storedImage = png(width: 40, height: 30, rgba: [255, 0, 0, 255])
    static let storedThumbnail = png(width: 20, height: 15, rgba: [0, 0, 255, 255])
    /// A 24×24 blue PNG: the rendered message's author's avatar.
    static let avatarImage = png(width: 24, height: 24, rgba: [0, 0, 255, 255])
    /// A 16×16 green PNG: the custom emoji `:partyparrot:` (and its alias `:yay:`).
    static let emojiImage = png(width: 16, height: 16, rgba: [0, 160, 0, 255])

    /// A PNG of one colour (stored deflate blocks).
    static func png(width: Int, height: Int, rgba: [UInt8]) -> [UInt8] {
        var raw: [UInt8] = []
        for _ in 0..<height { raw += [0] + Array(repeating: rgba, count: width).flatMap { $0 } }
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let length = UInt16(raw.count)
        let zlib: [UInt8] =
            [0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            + raw + withUnsafeBytes(of: ((b << 16) | a).bigEndian, Array.init)
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + body
                + withUnsafeBytes(of: ZipWriter.crc32(Data(body)).bigEndian, Array.init)
        }
        let header =
            withUnsafeBytes(of: UInt32(width).bigEndian, Array.init) + withUnsafeBytes(of: UInt32(height).bigEndian, Array.init)
            + [8, 6, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// A thread of 130 replies (the panel reads 50 a page), as an API page's messages.
    static let longThread = "1716000000.000500"
    static func longThread(user: String) -> [[String: Any]] {
        let replies: [[String: Any]] = (1...130).map { n in
            ["type": "message", "user": user, "ts": String(format: "1716000100.%06d", n), "thread_ts": longThread,
             "text": "reply number \(n)"]
        }
        return [["type": "message", "user": user, "ts": longThread, "thread_ts": longThread, "reply_count": 130,
                 "text": "a long thread"]] + replies
    }

    /// sample-data, plus the XSS and rendering messages and a long thread as an API page for #general.
    /// Sample-data and the messages above in `db` (or a new SQLite file); with `storeImages`, the image, the
    /// avatar and the custom emoji stored as `slackindex files` stores them.
    static func archive(general: String, into db: String? = nil, storeImages: Bool = true) throws -> String {
        let db = try ServeCLITests.importSample(into: db)
        let folder = TestSupport.temporaryDirectory().appendingPathComponent(general)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let user = APIFixture.dmMembers[0]
        let messages = xss.map { ts, text in ["type": "message", "user": user, "ts": ts, "text": text] as [String: Any] }
        let page: [String: Any] = ["ok": true, "messages": messages + rendered(user: user, general: general) + longThread(user: user), "has_more": false]
        try JSONSerialization.data(withJSONObject: page).write(to: folder.appendingPathComponent("history.json"))
        let imported = try CLITests.run(["--db", db, "import", folder.path, "--quiet"])
        #expect(imported.status == 0, "\(imported.stderr)")
        guard storeImages else { return db }
        // The image as `slackindex files` would have stored it: served from the archive, never from Slack.
        let archive = try Archive(path: db)
        func store(_ bytes: [UInt8]) throws -> FileBlob {
            let writer = try FileBlobs(archivePath: db).begin()
            try bytes.withUnsafeBytes { try writer.write($0) }
            let size = writer.size
            return FileBlob(sha256: try writer.commit().sha256, size: size, contentType: "image/png")
        }
        try archive.store.recordFileBlob(id: "F0UIIMAGE", blob: try store(storedImage))
        // Its thumbnail, as `slackindex files` stores Slack's thumb_480: the timeline shows it, the click the image.
        try archive.store.recordFileThumb(
            id: "F0UIIMAGE", url: "https://files.slack.com/files-tmb/T0-F0UIIMAGE-1/chart_480.png",
            blob: try store(storedThumbnail))
        // The author's avatar and a custom emoji with an alias, as `slackindex files` stores them.
        let avatarURL = "https://avatars.slack-edge.com/2024-05-01/\(user)_72.png"
        try #require(archive.store as? SQLiteArchive).pool.write { db in
            try SQLiteArchive.upsertAvatarURLs([(user, avatarURL)], in: db)
        }
        try archive.store.recordImageBlob(.avatar, key: user, url: avatarURL, blob: try store(avatarImage))
        let emojiURL = "https://emoji.slack-edge.com/T0/partyparrot/1.png"
        try archive.store.storeCustomEmoji([
            CustomEmoji(name: "partyparrot", url: emojiURL), CustomEmoji(name: "yay", aliasOf: "partyparrot"),
        ])
        try archive.store.recordImageBlob(.emoji, key: "partyparrot", url: emojiURL, blob: try store(emojiImage))
        return db
    }

    @Test(.enabled(if: required || available, "needs python3 with selenium and chromium-driver"))
    func signInReadScrollThreadSearchLinksAndAccess() async throws {
        let general = try APIFixture.conversationID(folder: "general")
        try Self.check(db: try Self.archive(general: general), general: general, storedImages: true)
    }

    /// The same session with the archive in PostgreSQL (issue 50), which stores no files, avatars or custom emoji
    /// yet: everything else is checked alike.
    @Test(.enabled(if: required || available, "needs python3 with selenium and chromium-driver"))
    func theSameSessionOnPostgreSQL() async throws {
        guard PostgresTestServer.isAvailable else { return }
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let general = try APIFixture.conversationID(folder: "general")
        let db = try Self.archive(general: general, into: try server.database(), storeImages: false)
        try Self.check(db: db, general: general, storedImages: false)
    }

    /// Drives the browser against `serve` on `db` (made by `archive`) and checks what it saw.
    static func check(db: String, general: String, storedImages: Bool) throws {
        let check = try SlackSDKClientTests.python(["-c", "import selenium"])
        try #require(check.status == 0, "SLACKINDEX_REQUIRE_BROWSER=1 but selenium is missing: \(check.stderr)")
        let marketing = try APIFixture.conversationID(folder: "marketing")
        let member = try CLITests.run(["--db", db, "token", "create", "--user", APIFixture.dmMembers[0]]).stdout
            .trimmingCharacters(in: .newlines)
        let outsider = try CLITests.run(["--db", db, "token", "create", "--user", APIFixture.outsider]).stdout
            .trimmingCharacters(in: .newlines)

        let history = Array(try APIFixture.exportHistory(folder: "marketing").reversed())
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let visible = Set(oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(APIFixture.outsider) }.map(\.id))
        let seenWords = Set(oracle.messages.filter { visible.contains($0.conversationID) }.flatMap(\.tokens))
        let dmMessages = oracle.messages.filter { $0.conversationID == APIFixture.dm && $0.threadTS == nil }
        let hiddenWord = try #require(
            dmMessages.flatMap(\.tokens).filter { $0.count > 4 && !seenWords.contains($0) && $0.allSatisfy(\.isLetter) }.min())
        let spec: [String: Any] = [
            "member": member, "outsider": outsider, "channel": marketing, "channel_name": "marketing",
            "middle": history[history.count / 2], "thread_channel": general, "thread": "1716185438.024538",
            "query": "exception", "misspelled": "excepton", "filter": "general", "xss": Self.xss.map { [general, $0.0] },
            "rendered": "1716000000.000401", "long_thread": Self.longThread,
            "hidden": APIFixture.dm, "hidden_ts": try #require(dmMessages.first?.ts), "hidden_word": hiddenWord,
            "stored_images": storedImages,
        ]
        // The README's screenshots come from the SQLite run, which shows the stored images.
        let folder = storedImages ? ProcessInfo.processInfo.environment["SLACKINDEX_SCREENSHOTS"] : nil
        let shots = folder.map { URL(fileURLWithPath: $0, relativeTo: TestSupport.root).path }
            ?? TestSupport.temporaryDirectory().path

        let server = try ServeCLITests.serve(db: db)
        let base = String(server.url.dropLast("api/".count))
        let script = TestSupport.root.appendingPathComponent("scripts/web_ui_browser.py").path
        let specText = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        let run = try SlackSDKClientTests.python([script, base, specText, shots])
        #expect(server.stop() == 0)
        try #require(run.status == 0, "\(run.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])

        // The member is in public channels and DMs only: no private channel, no group DM.
        #expect(out["sidebar_groups"] as? [String] == ["Channels", "Direct messages"])
        #expect(out["first_page"] as? Int == 100)
        #expect(out["pages_back"] as? [Int] == [50, 50, 50])
        #expect((out["forward_page"] as? Int ?? 0) > 0)
        #expect(out["reply_button"] as? String == "\(try Self.replyCount(general: general)) replies")
        #expect((out["thread_messages"] as? Int ?? 0) > 1)
        let longThread = (1...130).map { String(format: "1716000100.%06d", $0) }
        #expect(out["long_thread"] as? [String] == [Self.longThread] + longThread, "every reply once, in order")
        #expect((out["search_query"] as? String)?.hasSuffix("exception in:#general") == true)
        #expect(out["search_total"] as? Int ?? 0 > 20, "\(out["search_total"] ?? "")")
        let searchPages = ((out["search_total"] as? Int ?? 0) + 19) / 20
        #expect(out["search_pager"] as? String == "Page 1 of \(searchPages)")
        #expect((out["search_filtered"] as? Int ?? 0) > 0)
        #expect((out["search_filtered"] as? Int ?? 0) <= (out["search_all"] as? Int ?? 0))
        #expect((out["outsider_link"] as? String)?.contains("may not read it") == true)
        #expect(out["console_errors"] as? [String] == [], "\(out["console_errors"] ?? "")")
        let rendered = try #require(out["rendered"] as? [String: Any])
        #expect(rendered["html"] as? String == "<b>bold</b> <i>slanted</i> <s>gone</s> <code>code</code>")
        #expect(rendered["link"] as? String == "https://example.com/x")
        #expect(rendered["mention"] as? String == "@Matthew Thompson")
        #expect(rendered["here"] as? String == "@here")
        // Emoji as glyphs where the system draws them, else as `:name:` (they were empty boxes).
        let emojiFont = Self.systemDrawsEmoji
        #expect(rendered["emoji_font"] as? String == (emojiFont ? "font" : "none"))
        #expect(rendered["emoji"] as? String == (emojiFont ? "🎉" : ":tada:"))
        #expect(rendered["edited"] as? Bool == true)
        #expect(rendered["reaction"] as? String == (emojiFont ? "🎉 2" : ":tada: 2"))
        #expect((rendered["reacted"] as? String)?.contains("Matthew Thompson") == true)
        #expect(rendered["file"] as? String == "report.pdf 120.6 KB not fetched")
        #expect(rendered["file_link"] as? String == Self.fileLink)
        // One author's messages within five minutes are one group: the three markup messages follow each other,
        // then the rendered one; the app's message, the join, the message after the join and the broadcast start
        // groups; the long thread's parent follows the broadcast.
        let grouped = (rendered["grouped"] as? [String] ?? []).filter { $0.hasPrefix("1716000000.") }
        let xssTail = Self.xss.dropFirst().map(\.0)
        #expect(grouped == xssTail + ["1716000000.000401", Self.longThread], "\(grouped)")
        #expect(rendered["group_head"] as? [String] == ["hidden", "none"], "no avatar or name inside a group")
        // The sticky day header ends above the day's first message (it hung 14 px over it).
        #expect((out["dayhead_overlap"] as? Int ?? 99) <= 0, "\(out["dayhead_overlap"] ?? "")")
        #expect(out["search_box_after"] as? String == "", "the search box is cleared after leaving the results")
        #expect(out["suggestion"] as? String == "exception", "did you mean, as in the terminal")
        if storedImages { try Self.checkImages(rendered) }
        #expect(out["offsite_requests"] as? [String] == [], "\(out["offsite_requests"] ?? "")")
        #expect(rendered["bot"] as? String == "deploybotAPP", "the app's name and its badge")
        #expect(rendered["join_quiet"] as? Bool == true)
        #expect(rendered["quote"] as? String == "quoted line")
        #expect(rendered["list"] as? [String] == ["first", "second"])
        #expect(rendered["code"] as? String == "let x = 1 < 2")
        #expect(rendered["channel"] as? String == "#general")
        #expect(rendered["broadcast"] as? String == "replied to a thread")
        for name in ["ui-desktop.png", "ui-phone.png"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: shots).appendingPathComponent(name))
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]) && data.count > 10_000, "\(name)")
        }
        print("web UI in the browser: first paint \(out["paint_ms"] ?? "?") ms, search \(out["search_ms"] ?? "?") ms")
    }

    /// The stored image, avatar and custom emoji, served from the archive.
    static func checkImages(_ rendered: [String: Any]) throws {
        let image = try #require(rendered["image"] as? [String: Any], "the stored image is shown inline")
        #expect(image["src"] as? String == "/files/F0UIIMAGE?thumb=1", "its thumbnail, from the archive")
        #expect(image["width"] as? Int == 20 && image["link"] as? String == "/files/F0UIIMAGE", "the click: the image")
        // The author's avatar and the custom emoji (in the text, and its alias in a reaction) from the archive, with
        // every other host unreachable (the browser's proxy is a closed port).
        let avatar = try #require(rendered["avatar"] as? [String: Any], "the stored avatar is shown")
        #expect((avatar["src"] as? String)?.hasPrefix("/avatars/\(APIFixture.dmMembers[0])?v=") == true, "\(avatar)")
        #expect(avatar["width"] as? Int == 24)
        let custom = try #require(rendered["custom"] as? [String: Any], "the custom emoji is an image")
        #expect((custom["src"] as? String)?.hasPrefix("/emoji/partyparrot?v=") == true && custom["width"] as? Int == 16)
        #expect(custom["alt"] as? String == ":partyparrot:")
        let reaction = try #require(rendered["custom_reaction"] as? [String: Any], "the alias in a reaction")
        #expect((reaction["src"] as? String)?.hasPrefix("/emoji/yay?v=") == true && reaction["width"] as? Int == 16)
        #expect(reaction["text"] as? String == "1")
    }

    /// The reply count of the thread the test opens, from the export.
    static func replyCount(general: String) throws -> Int {
        try APIFixture.exportMessages(folder: "general").filter {
            $0["thread_ts"] as? String == "1716185438.024538" && $0["ts"] as? String != "1716185438.024538"
        }.count
    }
}
