import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `serve`'s `/files/{id}`: a stored file for those who may read its conversation, 404 for everyone else.
@Suite struct FileServeTests {
    /// An archive with a file in a private channel (member U1), one in a DM (U1 and U3), one in a public channel,
    /// an HTML file called `.png`, and one never fetched; tokens for U1, U2 (member of neither) and U3.
    struct Fixture {
        let archive: Archive
        let api: SlackAPI
        let member: String
        let outsider: String
        let dmPeer: String

        static let privateBytes = Array("PRIVATE: the merger plan\n".utf8)
        static let dmBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(0..<200).map { UInt8($0) }
        static let publicBytes = Array("%PDF-1.4 public notes".utf8)
        static let htmlBytes = Array("<html><script>alert(1)</script></html>".utf8)

        init() throws {
            func message(_ ts: String, _ file: String) -> String {
                #"[{"type":"message","user":"U1","text":"attached","ts":"\#(ts)","files":[\#(file)]}]"#
            }
            func file(_ id: String, _ name: String, _ mimetype: String) -> String {
                #"{"id":"\#(id)","name":"\#(name)","mimetype":"\#(mimetype)","size":10,"mode":"hosted","url_private":"https://files.slack.com/files-pri/T1-\#(id)/x"}"#
            }
            let export = try TestSupport.writeExport([
                "users.json": #"""
                    [{"id":"U1","name":"ann","team_id":"T1"},{"id":"U2","name":"bo","team_id":"T1"},
                     {"id":"U3","name":"cy","team_id":"T1"}]
                    """#,
                "channels.json": #"[{"id":"C1","name":"general","created":"1433558319","members":["U1","U2","U3"]}]"#,
                "groups.json": #"[{"id":"G1","name":"secret","created":"1433558319","members":["U1"]}]"#,
                "dms.json": #"[{"id":"D1","created":"1433558319","members":["U1","U3"]}]"#,
                "secret/2024-04-24.json": message("1714000000.000100", file("FPRIV", "plan.txt", "text/plain")),
                "D1/2024-04-24.json": message("1714000000.000200", file("FDM", #"Ünïcode \"photo\".png"#, "image/png")),
                "general/2024-04-24.json": "["
                    + [
                        #"{"type":"message","user":"U1","text":"a","ts":"1714000000.000300","files":[\#(file("FPUB", "notes.pdf", "application/pdf"))]}"#,
                        #"{"type":"message","user":"U1","text":"b","ts":"1714000000.000400","files":[\#(file("FHTML", "cute.png", "image/png"))]}"#,
                        #"{"type":"message","user":"U1","text":"c","ts":"1714000000.000500","files":[\#(file("FNONE", "never.txt", "text/plain"))]}"#,
                    ].joined(separator: ",") + "]",
            ])
            archive = try TestSupport.makeArchive()
            _ = try Importer(archive: archive).importExport(at: export.path)
            let blobs = FileBlobs(archivePath: archive.path)
            for (id, bytes, name) in [
                ("FPRIV", Self.privateBytes, "plan.txt"), ("FDM", Self.dmBytes, "photo.png"),
                ("FPUB", Self.publicBytes, "notes.pdf"), ("FHTML", Self.htmlBytes, "cute.png"),
            ] {
                let writer = try blobs.begin()
                try bytes.withUnsafeBytes { try writer.write($0) }
                let type = FileType.decide(prefix: writer.prefix, name: name, mimetype: nil)
                let size = writer.size
                let committed = try writer.commit()
                try archive.store.recordFileBlob(id: id, blob: FileBlob(sha256: committed.sha256, size: size, contentType: type))
            }
            api = SlackAPI(archive: archive)
            member = try archive.createToken(userID: "U1").token
            outsider = try archive.createToken(userID: "U2").token
            dmPeer = try archive.createToken(userID: "U3").token
        }
    }

    static func get(
        _ f: Fixture, _ path: String, token: String?, headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8]) {
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI()))
        return try await app.test(.router) { client in
            var headers = extra
            if let token { headers[.authorization] = "Bearer \(token)" }
            return try await client.execute(uri: path, method: .get, headers: headers) { response in
                (response.status, response.headers, Array(buffer: response.body))
            }
        }
    }

    @Test func aPrivateChannelsFileIsServedToItsMemberOnly() async throws {
        let f = try Fixture()
        let member = try await Self.get(f, "/files/FPRIV", token: f.member)
        #expect(member.status == .ok)
        #expect(member.body == Fixture.privateBytes)
        #expect(member.headers[.contentType] == "text/plain; charset=utf-8")
        #expect(member.headers[.xContentTypeOptions] == "nosniff")
        #expect(member.headers[.contentDisposition]?.hasPrefix("inline;") == true)

        for token in [f.outsider, f.dmPeer, "xoxp-slackindex-" + String(repeating: "A", count: 40)] {
            let other = try await Self.get(f, "/files/FPRIV", token: token)
            #expect(other.status == .notFound)
            #expect(other.body != Fixture.privateBytes)
        }
        #expect(try await Self.get(f, "/files/FPRIV", token: nil).status == .notFound)
    }

    @Test func aDMsFileIsServedToItsTwoMembersOnly() async throws {
        let f = try Fixture()
        for token in [f.member, f.dmPeer] {
            let answer = try await Self.get(f, "/files/FDM", token: token)
            #expect(answer.status == .ok)
            #expect(answer.body == Fixture.dmBytes)
            #expect(answer.headers[.contentType] == "image/png")
            // The name as Slack gave it, never a path, escaped for the header.
            #expect(
                answer.headers[.contentDisposition]
                    == "inline; filename=\"_n_code _photo_.png\"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20%22photo%22.png")
        }
        #expect(try await Self.get(f, "/files/FDM", token: f.outsider).status == .notFound)
    }

    @Test func publicFilesNeverFetchedAndActiveTypes() async throws {
        let f = try Fixture()
        let pdf = try await Self.get(f, "/files/FPUB", token: f.outsider)
        #expect(pdf.status == .ok && pdf.headers[.contentType] == "application/pdf")
        // Never fetched, unknown, or a path: the same 404.
        for path in ["/files/FNONE", "/files/FMISSING", "/files/..%2F..%2Fetc%2Fpasswd"] {
            #expect(try await Self.get(f, path, token: f.member).status == .notFound, "\(path)")
        }
        // HTML called .png: HTML, and only as a download, sandboxed.
        let html = try await Self.get(f, "/files/FHTML", token: f.member)
        #expect(html.status == .ok)
        #expect(html.headers[.contentType] == "text/html; charset=utf-8")
        #expect(html.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
        #expect(html.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
        #expect(html.headers[.xContentTypeOptions] == "nosniff")
    }

    /// The web UI's timeline page says which of its messages' files are stored (and their types), so it shows
    /// images inline, other files as downloads and the rest as not fetched.
    @Test func theTimelineSaysWhichFilesAreStored() async throws {
        let f = try Fixture()
        let dm = await f.api.call("slackindex.timeline", parameters: ["channel": "D1"], bearer: f.member)
        #expect(dm.ok)
        #expect(dm.body.contains(#""stored_files":{"FDM":"image/png"}"#), "\(dm.body)")
        let general = await f.api.call("slackindex.timeline", parameters: ["channel": "C1"], bearer: f.member)
        #expect(
            general.body.contains(#""stored_files":{"FHTML":"text/html; charset=utf-8","FPUB":"application/pdf"}"#),
            "FNONE was never fetched: \(general.body)")
        let script = WebAssets.script
        #expect(script.contains("'/files/' + encodeURIComponent(f.id)") && script.contains("not fetched"))
    }

    @Test func rangesAnswerTheAskedPart() async throws {
        let f = try Fixture()
        let size = Fixture.dmBytes.count
        let part = try await Self.get(f, "/files/FDM", token: f.member, headers: [.range: "bytes=10-19"])
        #expect(part.status == .partialContent)
        #expect(part.body == Array(Fixture.dmBytes[10...19]))
        #expect(part.headers[.contentRange] == "bytes 10-19/\(size)")
        let tail = try await Self.get(f, "/files/FDM", token: f.member, headers: [.range: "bytes=-8"])
        #expect(tail.body == Array(Fixture.dmBytes.suffix(8)))
        let open = try await Self.get(f, "/files/FDM", token: f.member, headers: [.range: "bytes=200-"])
        #expect(open.body == Array(Fixture.dmBytes[200...]))
        let past = try await Self.get(f, "/files/FDM", token: f.member, headers: [.range: "bytes=5000-"])
        #expect(past.status == .rangeNotSatisfiable)
        #expect(past.headers[.contentRange] == "bytes */\(size)")
        // A range for someone who may not read the file is the same 404.
        let outsider = try await Self.get(f, "/files/FDM", token: f.outsider, headers: [.range: "bytes=0-1"])
        #expect(outsider.status == .notFound)
    }

    @Test(arguments: [
        ("bytes=0-0", 100, FileRoute.ByteRange.part(0...0)),
        ("bytes=90-200", 100, .part(90...99)),
        ("bytes=-200", 100, .part(0...99)),
        ("bytes=100-", 100, .unsatisfiable),
        ("bytes=0-1,5-6", 100, .whole),
        ("items=0-1", 100, .whole),
        ("bytes=5-1", 100, .whole),
        ("bytes=-0", 100, .unsatisfiable),
    ])
    func byteRanges(header: String, size: Int, expected: FileRoute.ByteRange) {
        #expect(FileRoute.byteRange(header, size: size) == expected)
    }
}
