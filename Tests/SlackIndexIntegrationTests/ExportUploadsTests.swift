import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Files an export carries (slackdump's `__uploads/<file id>/<name>` and `<conversation>/attachments/<id>-<name>`)
/// are stored by the import, with no network, and served and searched like fetched ones.
@Suite struct ExportUploadsTests {
    static let plan = "the quetzal merger plan, private\n"
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 9, count: 1200)
    static let notes = "standard layout notes\n"

    /// The export's files: listings, one message per file, and the files beside them.
    static let files: [String: Data] = {
        func message(_ ts: String, _ id: String, _ name: String, _ mimetype: String) -> String {
            #"[{"type":"message","user":"U1","text":"attached","ts":"\#(ts)","files":[{"id":"\#(id)","name":"\#(name)","mimetype":"\#(mimetype)","mode":"hosted","url_private":"https://files.slack.com/files-pri/T1-\#(id)/x"}]}]"#
        }
        return [
            "users.json": #"[{"id":"U1","name":"ann","team_id":"T1"},{"id":"U2","name":"bo","team_id":"T1"}]"#,
            "channels.json": #"[{"id":"C1","name":"general","created":"1433558319","members":["U1","U2"]}]"#,
            "groups.json": #"[{"id":"G1","name":"secret","created":"1433558319","members":["U1"]}]"#,
            "secret/2024-04-24.json": message("1714000000.000100", "FPRIV", "plan.txt", "text/plain"),
            "general/2024-04-24.json": message("1714000000.000200", "FPNG", "cat.png", "image/png"),
            "general/2024-04-25.json": message("1714100000.000100", "FSTD", "notes.txt", "text/plain"),
            "__uploads/FPRIV/plan.txt": plan,
            "__uploads/FPNG/cat.png": png,
            "__uploads/FNOMSG/orphan.txt": "no message carries me",
            "__uploads/not-an-id/x.txt": "ignored",
            "general/attachments/FSTD-notes.txt": notes,
        ].mapValues { value in (value as? String).map { Data($0.utf8) } ?? Data(value as? [UInt8] ?? []) }
    }()

    static func folderExport() throws -> URL {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("slackdump-export")
        for (path, data) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        return root
    }

    static func zipExport() throws -> URL {
        var zip = ZipWriter()
        for (path, data) in files.sorted(by: { $0.key < $1.key }) {
            zip.add(nameBytes: Array(path.utf8), contents: data, utf8Flag: true)
        }
        let url = TestSupport.temporaryDirectory().appendingPathComponent("slackdump-export.zip")
        try zip.data().write(to: url)
        return url
    }

    @Test(arguments: ["folder", "zip"])
    func theImportStoresTheFilesTheExportCarries(kind: String) async throws {
        let export = kind == "folder" ? try Self.folderExport() : try Self.zipExport()
        let archive = try TestSupport.makeArchive()
        let first = try Importer(archive: archive).importExport(at: export.path)
        var expected = AttachedFilesSummary()
        expected.found = 3
        expected.stored = 3
        expected.unknown = 1
        expected.bytes = Int64(Self.plan.utf8.count + Self.png.count + Self.notes.utf8.count)
        #expect(first.attachedFiles == expected)
        #expect(first.messagesAdded == 3)

        let blobs = try archive.store.fileBlobs()
        #expect(blobs["FPNG"]?.contentType == "image/png")
        #expect(blobs["FSTD"]?.contentType == "text/plain; charset=utf-8", "the standard layout's id-name")
        #expect(blobs["FNOMSG"] == nil)

        // A word only in the attached file finds its message.
        let hits = try SearchEngine(archive: archive).search("quetzal")
        #expect(hits.hits.map(\.message.text) == ["attached"] && hits.hits.count == 1)

        // Served like a fetched file: to the private channel's member, 404 to anyone else.
        let api = SlackAPI(archive: archive)
        let member = try archive.createToken(userID: "U1").token
        let outsider = try archive.createToken(userID: "U2").token
        let router = SlackAPIServer.buildRouter(api: api, ui: WebUI())
        func get(_ path: String, _ token: String) async throws -> (HTTPResponse.Status, [UInt8]) {
            try await Application(router: router).test(.router) { client in
                try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(token)"]) {
                    ($0.status, Array(buffer: $0.body))
                }
            }
        }
        let served = try await get("/files/FPRIV", member)
        #expect(served.0 == .ok && served.1 == Array(Self.plan.utf8))
        #expect(try await get("/files/FPRIV", outsider).0 == .notFound)
        #expect(try await get("/files/FPNG", outsider).1 == Self.png)

        // The same import again stores nothing new.
        let again = try Importer(archive: archive).importExport(at: export.path)
        #expect(again.attachedFiles?.alreadyThere == 3 && again.attachedFiles?.stored == 0)
    }

    /// The command says what it stored; an export without files says nothing of them.
    @Test func theImportCommandReportsTheStoredFiles() throws {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("a.sqlite").path
        let run = try CLITests.run(["--db", db, "import", try Self.folderExport().path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(
                "  attached:      3 files stored (1.3 KB), 0 already there, 0 not stored, 1 of no message "
                    + "(carried with the data, no download)"), "\(run.stdout)")
        let json = try CLITests.run(["--db", db, "import", try Self.folderExport().path, "--json", "--quiet"])
        let object = try CLITests.json(Substring(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let attached = try #require(object["attached_files"] as? [String: Any])
        #expect(attached["already_there"] as? Int == 3 && attached["stored"] as? Int == 0)
        let plain = try CLITests.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"])
        #expect(!plain.stdout.contains("attached:"))
    }
}

/// slackdump's archive folder keeps what it downloaded beside `slackdump.sqlite`: `__uploads/<file id>/<name>` and
/// `__avatars/<user id>/<name>` (the original-size profile picture). The import stores both, with no network.
extension ExportUploadsTests {
    static let avatarPNG: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 300)

    /// A slackdump archive folder: two members (ann with a profile picture, bo without), #general with a message
    /// carrying FPNG, FPNG in `__uploads/`, ann's picture, an HTML page as bo's and a picture of a member the
    /// archive does not know in `__avatars/`.
    static func slackdumpFolder() throws -> URL {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("slackdump-archive")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: root.appendingPathComponent("slackdump.sqlite").path)
        try queue.write { db in
            try db.execute(sql: DumpFixture.slackdumpSchema)
            try db.execute(sql: "INSERT INTO SESSION (ID, MODE) VALUES (1, 'archive')")
            for (id, type) in [(1, 3), (2, 4), (3, 0)] {
                try db.execute(
                    sql: "INSERT INTO CHUNK (ID, UNIX_TS, SESSION_ID, TYPE_ID, FINAL) VALUES (?, ?, 1, ?, 1)",
                    arguments: [id, 1_700_100_000_000 + id, type])
            }
            let ann = #"{"id":"U1","name":"ann","team_id":"T1","profile":{"image_72":"https://avatars.slack-edge.com/ann_72.png","image_original":"https://avatars.slack-edge.com/ann_original.png"}}"#
            let bo = #"{"id":"U2","name":"bo","team_id":"T1","profile":{"image_72":"https://avatars.slack-edge.com/bo_72.png"}}"#
            for (index, (id, name, data)) in [("U1", "ann", ann), ("U2", "bo", bo)].enumerated() {
                try db.execute(
                    sql: "INSERT INTO S_USER (ID, CHUNK_ID, IDX, USERNAME, DISPLAY_NAME, DATA) VALUES (?, 1, ?, ?, '', ?)",
                    arguments: [id, index, name, Data(data.utf8)])
            }
            try db.execute(
                sql: "INSERT INTO CHANNEL (ID, CHUNK_ID, NAME, IDX, DATA) VALUES ('C1', 2, 'general', 0, ?)",
                arguments: [Data(#"{"id":"C1","name":"general","is_channel":true,"members":["U1","U2"]}"#.utf8)])
            let message = #"{"type":"message","user":"U1","text":"a cat","ts":"1714000000.000100","files":[{"id":"FPNG","name":"cat.png","mimetype":"image/png","mode":"hosted","url_private":"https://files.slack.com/files-pri/T1-FPNG/cat.png"}]}"#
            try db.execute(
                sql: """
                    INSERT INTO MESSAGE (ID, CHUNK_ID, CHANNEL_ID, TS, PARENT_ID, THREAD_TS, IS_PARENT, IDX, TXT, DATA)
                    VALUES (1714000000000100, 3, 'C1', '1714000000.000100', NULL, NULL, 0, 0, 'a cat', ?)
                    """, arguments: [Data(message.utf8)])
        }
        try queue.close()
        let files: [String: [UInt8]] = [
            "__uploads/FPNG/cat.png": Self.png,
            "__avatars/U1/ann_original.png": Self.avatarPNG,
            // macOS's resource forks beside copied files: never taken for the file or the picture.
            "__avatars/U1/._ann_original.png": Array("resource fork".utf8),
            "__uploads/FPNG/._cat.png": Array("resource fork".utf8),
            "__avatars/U2/bo_original.png": Array("<html>sign in</html>".utf8),
            "__avatars/U9/x.png": Self.avatarPNG,
        ]
        for (path, bytes) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        return root
    }

    @Test func aSlackdumpArchiveFoldersFilesAndAvatarsAreStored() async throws {
        let folder = try Self.slackdumpFolder()
        let archive = try TestSupport.makeArchive()
        let first = Importer(archive: archive).importPaths([folder.path])
        #expect(first.messagesAdded == 1 && first.stopped == nil, "\(first)")
        var expected = AttachedFilesSummary()
        expected.found = 1
        expected.stored = 1
        expected.avatars = 1
        expected.avatarsNotStored = 2
        expected.bytes = Int64(Self.png.count)
        expected.avatarBytes = Int64(Self.avatarPNG.count)
        #expect(first.attachedFiles == expected, "\(first.notes)")
        #expect(first.notes.contains { $0.contains("U2") && $0.contains("not an image") }, "\(first.notes)")
        #expect(first.notes.contains { $0.contains("no member U9") }, "\(first.notes)")
        #expect(try archive.store.fileBlobs()["FPNG"]?.contentType == "image/png")
        // ann's picture stands for her recorded URL: `slackindex files` would not fetch it again.
        let ann = try #require(try archive.store.workspaceImages(.avatar).first { $0.key == "U1" })
        #expect(ann.blob?.contentType == "image/png" && ann.fetchedURL == ann.url)
        #expect(try archive.store.imageBlob(.avatar, key: "U2") == nil)

        // Served from the archive: the file and the avatar.
        let api = SlackAPI(archive: archive)
        let token = try archive.createToken(userID: "U2").token
        let router = SlackAPIServer.buildRouter(api: api, ui: WebUI())
        func get(_ path: String) async throws -> (HTTPResponse.Status, [UInt8]) {
            try await Application(router: router).test(.router) { client in
                try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(token)"]) {
                    ($0.status, Array(buffer: $0.body))
                }
            }
        }
        #expect(try await get("/files/FPNG") == (.ok, Self.png))
        #expect(try await get("/avatars/U1") == (.ok, Self.avatarPNG))
        #expect(try await get("/avatars/U2").0 == .notFound)

        // Again: nothing new is stored.
        let again = Importer(archive: archive).importPaths([folder.path])
        #expect(again.attachedFiles?.alreadyThere == 1 && again.attachedFiles?.stored == 0, "\(again)")
        #expect(again.attachedFiles?.avatars == 0, "\(again)")
    }
}
