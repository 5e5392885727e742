import Foundation
import SlackIndexStore
import Synchronization

/// Fetches the archive's files from Slack into the file store beside the archive (``FileBlobs``), a few at a time.
///
/// Each file is fetched from its `url_private_download` (else `url_private`) with the token, into a blob named by
/// its SHA-256; the archive then maps the file to the blob. A file already mapped to a blob that is on disk is not
/// asked for again, so a second run fetches only what is missing. Deleted files (`tombstone`, `hidden_by_limit`)
/// are not asked for; files hosted elsewhere (`external`, or a URL that is not Slack's) are left there, and the
/// token is never sent to them.
public struct FileFetcher: Sendable {
    /// What to fetch and how.
    public struct Options: Sendable {
        /// Only files of these conversations (ids or names); nil for all.
        public var conversations: [String]?
        /// Only files of messages at or after this ts (microseconds).
        public var lowerTSKey: Int64?
        /// Only files of messages before this ts (microseconds).
        public var upperTSKey: Int64?
        /// Files larger than this many bytes are not fetched (by Slack's size, or by what arrives); nil for no cap.
        public var maxBytes: Int64? = FileFetcher.defaultMaxBytes
        /// Only these kinds (see ``FileFetcher/matches(_:types:)``); nil for all.
        public var types: Set<String>?
        /// Requests at once.
        public var parallel = 4
        /// Fetch from this `scheme://host[:port]` instead of each URL's own (a mirror, or a test stand-in for
        /// Slack's file host); the token is sent there.
        public var fileHost: String?

        public init() {}
    }

    /// The default cap on a file's size: 100 MB.
    public static let defaultMaxBytes: Int64 = 100_000_000

    /// What a run did, file by file counted once each.
    public struct Report: Sendable, Codable, Equatable {
        /// Files the run considered (after the filters).
        public var files = 0
        /// Fetched and stored now.
        public var downloaded = 0
        /// Stored by an earlier run: not asked for.
        public var alreadyThere = 0
        /// Deleted at Slack: 404 or 410, `file_not_found`, `hidden_by_limit`, tombstones, no URL.
        public var gone = 0
        /// Refused: 401 or 403, or Slack's sign-in page instead of the file (a token without `files:read`).
        public var refused = 0
        /// Larger than the cap.
        public var tooLarge = 0
        /// Still failing after every retry (5xx, dropped connections), or another HTTP status.
        public var failed = 0
        /// Hosted outside Slack (`external` files, links to other sites): left there.
        public var external = 0
        /// Bytes stored by this run.
        public var bytes: Int64 = 0
        /// Files downloaded whose bytes the store had already (for another file): kept once.
        public var deduplicated = 0
        /// HTTP requests, including retries.
        public var requests = 0
        /// Requests answered 429.
        public var rateLimited = 0
        /// Seconds waited (Retry-After and backoff).
        public var waitedSeconds: Double = 0
        public var seconds: Double = 0
        /// Files not fetched for a reason a rerun may fix (refused, failed), with the reason: at most 20.
        public var problems: [String] = []
        /// Stored PDFs whose text is not searchable because `pdftotext` (poppler-utils) is not installed.
        public var pdfsWithoutText = 0
        /// Thumbnails of stored images (Slack's `thumb_480`, or the nearest size) fetched and stored now.
        public var thumbnails = 0
        /// Thumbnails stored by an earlier run: not asked for.
        public var thumbnailsAlreadyThere = 0
        /// Thumbnails Slack has not (404 or 410, now or in an earlier run: not asked for again at the same URL).
        public var thumbnailsGone = 0
        /// Thumbnails not stored (another HTTP error, not an image, over the cap, no answer); asked for again by
        /// the next run. The web UI shows the whole image meanwhile.
        public var thumbnailsFailed = 0
        /// Why, for at most 20 of them (apart from `problems`: a thumbnail is not a file).
        public var thumbnailProblems: [String] = []

        /// Files that should be in the store and are not.
        public var notFetched: Int { gone + refused + tooLarge + failed }

        public init() {}

        private enum CodingKeys: String, CodingKey {
            case files, downloaded, gone, refused, failed, external, bytes, deduplicated, requests, seconds, problems
            case alreadyThere = "already_there"
            case pdfsWithoutText = "pdfs_without_text"
            case thumbnails
            case thumbnailsAlreadyThere = "thumbnails_already_there"
            case thumbnailsFailed = "thumbnails_failed"
            case thumbnailsGone = "thumbnails_gone"
            case thumbnailProblems = "thumbnail_problems"
            case tooLarge = "too_large"
            case rateLimited = "rate_limited"
            case waitedSeconds = "waited_seconds"
        }
    }

    /// Where a run is.
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var downloaded: Int
        public var bytes: Int64
        public var elapsed: Double
    }

    private let archive: any FileArchive & Directory & Timelines
    private let client: SlackWebClient
    private let blobs: FileBlobs
    private let options: Options

    public init(archive: Archive, client: SlackWebClient, blobs: FileBlobs? = nil, options: Options = Options()) {
        self.archive = archive.store
        self.client = client
        self.blobs = blobs ?? FileBlobs(archivePath: archive.path)
        self.options = options
    }

    /// Fetches what is missing and reports it.
    ///
    /// - Throws: `FileStoreError` or `StoreError.writeFailed` when the file store or the archive cannot be
    ///   written (a full disk): what was stored before stays, and the next run goes on; conversation errors
    ///   (`StoreError.conversationNotFound`); `CancellationError`.
    public func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws -> Report {
        let started = ContinuousClock.now
        let before = client.stats
        var selection = Archive.FileSelection(lowerTSKey: options.lowerTSKey, upperTSKey: options.upperTSKey)
        if let names = options.conversations {
            selection.conversations = try names.map { try archive.conversation(named: $0).rowID }
        }
        let files = try archive.archivedFiles(selection).filter { Self.matches($0, types: options.types) }
        let stored = try archive.fileBlobs()
        let thumbs = try archive.fileThumbs()
        let goneThumbs = try archive.goneThumbnails()
        blobs.removeAbandonedTemporaries()
        let state = RunState(total: files.count)
        let workers = max(1, min(options.parallel, files.count))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    while true {
                        try Task.checkCancellation()
                        let index = state.value.withLock { s -> Int in
                            defer { s.next += 1 }
                            return s.next
                        }
                        guard index < files.count else { return }
                        let file = files[index]
                        let outcome = try await fetch(file, known: stored[file.id])
                        let thumbnail = try await fetchThumbnail(
                            of: file, blob: stored[file.id], after: outcome, known: thumbs[file.id],
                            gone: goneThumbs[file.id])
                        let (snapshot, failingSince) = state.value.withLock { s -> (Progress, Int) in
                            s.report.record(outcome, file: file)
                            s.report.record(thumbnail)
                            switch outcome {
                            case .failed: s.failuresInARow += 1
                            case .downloaded: s.failuresInARow = 0
                            default: break  // no answer asked for, or one that says nothing of the host's health
                            }
                            // A stored image's thumbnail is the only request a rerun makes for it: a host that
                            // answers none of them is down as surely.
                            if case .failed(_, hostFailing: true) = thumbnail { s.failuresInARow += 1 }
                            if case .stored = thumbnail { s.failuresInARow = 0 }
                            s.progress.done += 1
                            if case .downloaded(let size, _) = outcome {
                                s.progress.downloaded += 1
                                s.progress.bytes += size
                            }
                            s.progress.elapsed = (ContinuousClock.now - started).seconds
                            return (s.progress, s.failuresInARow)
                        }
                        progress(snapshot)
                        // A host that fails every file (down, unreachable) ends the run rather than being waited
                        // out file by file.
                        if failingSince >= Self.failuresToStop {
                            if case .failed(let why) = outcome {
                                throw FileFetchError.hostFailing(files: failingSince, last: why)
                            }
                            if case .failed(let why, true) = thumbnail {
                                throw FileFetchError.hostFailing(files: failingSince, last: why)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        var report = state.value.withLock { $0.report }
        let after = client.stats
        report.requests = after.requests - before.requests
        report.rateLimited = after.rateLimited - before.rateLimited
        report.waitedSeconds = after.waited - before.waited
        report.seconds = (ContinuousClock.now - started).seconds
        if !PDFText.isAvailable {
            let blobs = try archive.fileBlobs()
            report.pdfsWithoutText = files.filter { blobs[$0.id]?.contentType.hasPrefix("application/pdf") == true }.count
        }
        return report
    }

    /// The workers' shared place: the next file to take, the report and the progress.
    private final class RunState: Sendable {
        let value: Mutex<(next: Int, report: Report, progress: Progress, failuresInARow: Int)>

        init(total: Int) {
            var report = Report()
            report.files = total
            value = Mutex((0, report, Progress(done: 0, total: total, downloaded: 0, bytes: 0, elapsed: 0), 0))
        }
    }

    /// Files failing (after their retries) with none downloaded in between that end a run.
    static let failuresToStop = 8

    /// What became of one file.
    enum Outcome {
        case downloaded(size: Int64, deduplicated: Bool)
        case alreadyThere
        case gone
        case refused(String)
        case tooLarge
        case failed(String)
        case external
    }

    private func fetch(_ file: ArchivedFile, known: FileBlob?) async throws -> Outcome {
        if let known, blobs.contains(known.sha256, size: known.size) {
            // Again each run: an import that rewrote the message dropped its file's words (done once otherwise).
            try indexText(of: file.id, known)
            return .alreadyThere
        }
        let mode = file.mode ?? "hosted"
        if mode == "tombstone" || mode == "hidden_by_limit" { return .gone }
        if mode == "external" { return .external }
        guard let original = file.urlDownload ?? file.urlPrivate else { return .gone }
        guard let (url, authorized) = target(of: original) else { return .external }
        if let cap = options.maxBytes, let size = file.size, size > cap { return .tooLarge }
        let result: SlackWebClient.Download
        do {
            result = try await client.download(
                url, label: "file \(file.id)", authorized: authorized, maxBytes: options.maxBytes ?? .max,
                into: blobs)
        } catch let error as RemoteError {
            return .failed("\(file.id): \(error)")
        }
        switch result {
        case .status(let status):
            switch status {
            case 404, 410: return .gone
            case 401, 403: return .refused("\(file.id): HTTP \(status)")
            default: return .failed("\(file.id): HTTP \(status)")
            }
        case .tooLarge:
            return .tooLarge
        case .complete(let blob, let served):
            let type = FileType.decide(prefix: blob.prefix, name: file.name, mimetype: file.mimetype)
            if type.hasPrefix("text/html"), Self.isSignInPage(served: served, file: file) {
                blob.discard()
                return .refused("\(file.id): Slack answered with its sign-in page (a token without files:read?)")
            }
            let size = blob.size
            let committed = try blob.commit()
            let stored = FileBlob(sha256: committed.sha256, size: size, contentType: type)
            try archive.recordFileBlob(id: file.id, blob: stored)
            try indexText(of: file.id, stored)
            return .downloaded(size: size, deduplicated: committed.wasStored)
        }
    }

    /// What became of one file's thumbnail.
    enum ThumbnailOutcome {
        /// None wanted (not a stored image, a small one, no `thumb_*` URL, or one not on Slack's host).
        case none
        case stored
        case alreadyThere
        /// 404 or 410 at Slack, now or (for the same URL) in an earlier run.
        case gone
        /// Why; `hostFailing` when no answer came (the host down or unreachable, 5xx after the retries).
        case failed(String, hostFailing: Bool)
    }

    /// Images at most this large are shown as they are: a thumbnail would save little.
    static let thumbnailFrom: Int64 = 64 * 1024
    /// Slack's thumbnail sizes, in the order they are taken: the web UI shows images at most 360 px wide (720 on
    /// sharp screens) and `thumb_480` is the size Slack itself shows in a timeline.
    static let thumbnailKeys = ["thumb_480", "thumb_360", "thumb_720", "thumb_800", "thumb_960", "thumb_1024", "thumb_160"]

    /// Fetches the thumbnail of `file` once it is stored as an image larger than `thumbnailFrom`: the URL is the
    /// file object's `thumb_480` (or the nearest size) in the stored JSON of its message, asked for with the token
    /// on Slack's host only, stored only when the bytes are an image of at most `ImageFetcher.defaultMaxBytes`.
    /// - Parameters:
    ///   - blob: the file's blob as the run found it at its start (`alreadyThere`), nil when it had none.
    ///   - gone: the URL Slack answered 404 or 410 for in an earlier run, if any.
    private func fetchThumbnail(
        of file: ArchivedFile, blob: FileBlob?, after outcome: Outcome, known: FileBlob?, gone: String?
    ) async throws -> ThumbnailOutcome
    {
        // The file's blob: known from the run's start when it was there, read once when just downloaded.
        let stored: FileBlob?
        switch outcome {
        case .alreadyThere: stored = blob
        case .downloaded: stored = try archive.fileBlob(id: file.id)
        default: return .none
        }
        if let known, blobs.contains(known.sha256, size: known.size) { return .alreadyThere }
        guard let stored, FileType.isImage(stored.contentType), stored.size > Self.thumbnailFrom,
            let json = try archive.rawMessages(ids: [file.messageID])[file.messageID]?.json,
            let address = Self.thumbnailURL(of: file.id, inMessage: json), let (url, authorized) = target(of: address)
        else { return .none }
        if gone == address { return .gone }
        let result: SlackWebClient.Download
        do {
            result = try await client.download(
                url, label: "thumbnail \(file.id)", authorized: authorized, maxBytes: ImageFetcher.defaultMaxBytes,
                into: blobs)
        } catch let error as RemoteError {
            return .failed("thumbnail of \(file.id): \(error)", hostFailing: true)
        }
        switch result {
        case .status(404), .status(410):
            try archive.recordGoneThumbnail(id: file.id, url: address)
            return .gone
        case .status(let status):
            return .failed("thumbnail of \(file.id): HTTP \(status)", hostFailing: status >= 500)
        case .tooLarge:
            return .failed(
                "thumbnail of \(file.id): larger than \(ImageFetcher.defaultMaxBytes) bytes", hostFailing: false)
        case .complete(let writer, _):
            switch try writer.commitImage() {
            case .failure(let other): return .failed("thumbnail of \(file.id): not an image (\(other.type))", hostFailing: false)
            case .success(let blob):
                try archive.recordFileThumb(id: file.id, url: address, blob: blob)
                return .stored
            }
        }
    }

    /// The `thumb_*` URL (``thumbnailKeys``, in order) of file `id` in a message's JSON (`files`, or a legacy
    /// `file`); nil when the message has none for it.
    static func thumbnailURL(of id: String, inMessage json: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return nil
        }
        var files = object["files"] as? [[String: Any]] ?? []
        if let legacy = object["file"] as? [String: Any] { files.append(legacy) }
        guard let file = files.first(where: { $0["id"] as? String == id }) else { return nil }
        return thumbnailKeys.lazy.compactMap { file[$0] as? String }.first { !$0.isEmpty }
    }

    /// Adds a text-like file's words to its messages' search entries (``Archive/indexFileText(fileID:text:)``).
    private func indexText(of id: String, _ blob: FileBlob) throws {
        try Self.indexText(of: id, blob, archive: archive, blobs: blobs)
    }

    /// Adds stored file `id`'s words to its messages' search entries when it is text and they lack them.
    /// A file whose text cannot be read (a PDF without a text layer, a broken one) is recorded with no text, so
    /// later runs do not try it again.
    static func indexText(of id: String, _ blob: FileBlob, archive: any FileArchive, blobs: FileBlobs) throws {
        guard FileText.isIndexable(blob.contentType), try archive.fileTextPending(fileID: id) else { return }
        try archive.indexFileText(fileID: id, text: FileText.read(blob, in: blobs) ?? "")
    }

    /// Slack answers a request without a valid token with its HTML sign-in page and status 200: HTML where the
    /// file is not HTML.
    static func isSignInPage(served: String?, file: ArchivedFile) -> Bool {
        let claimed = (file.mimetype ?? "").lowercased()
        let filetype = (file.filetype ?? "").lowercased()
        return !claimed.hasPrefix("text/html") && filetype != "html"
    }

    /// The URL to ask and whether the token may go with it: Slack's own https hosts (`*.slack.com`), or every
    /// URL moved to ``Options/fileHost``; nil for any other host (the file is left where it is).
    func target(of url: String) -> (String, Bool)? {
        guard let parsed = URLComponents(string: url), let host = parsed.host?.lowercased() else { return nil }
        if let fileHost = options.fileHost, var base = URLComponents(string: fileHost) {
            base.percentEncodedPath = parsed.percentEncodedPath
            base.percentEncodedQuery = parsed.percentEncodedQuery
            return base.string.map { ($0, true) }
        }
        guard parsed.scheme?.lowercased() == "https", host == "slack.com" || host.hasSuffix(".slack.com") else {
            return nil
        }
        return (url, true)
    }

    /// Whether `file` is one of `types`: Slack's `files.list` kinds (`images`, `snippets`, `posts` or `spaces`,
    /// `pdfs`, `zips`), or a `filetype` / name extension (`png`, `csv`); nil matches all.
    public static func matches(_ file: ArchivedFile, types: Set<String>?) -> Bool {
        guard let types, !types.isEmpty else { return true }
        let filetype = (file.filetype ?? "").lowercased()
        let ext = file.name.map { ($0 as NSString).pathExtension.lowercased() } ?? ""
        for type in types {
            switch type.lowercased() {
            case "all": return true
            case "images": if (file.mimetype ?? "").lowercased().hasPrefix("image/") { return true }
            case "snippets": if file.mode == "snippet" { return true }
            case "posts", "spaces": if file.mode == "post" { return true }
            case "pdfs": if filetype == "pdf" || ext == "pdf" { return true }
            case "zips": if filetype == "zip" || ext == "zip" { return true }
            case let other: if other == filetype || other == ext { return true }
            }
        }
        return false
    }

    /// The kinds ``matches(_:types:)`` knows by name.
    public static let typeNames = ["images", "snippets", "posts", "spaces", "pdfs", "zips"]
}

extension FileFetcher.Report {
    mutating func record(_ thumbnail: FileFetcher.ThumbnailOutcome) {
        switch thumbnail {
        case .none: break
        case .stored: thumbnails += 1
        case .alreadyThere: thumbnailsAlreadyThere += 1
        case .gone: thumbnailsGone += 1
        case .failed(let why, _):
            thumbnailsFailed += 1
            if thumbnailProblems.count < 20 { thumbnailProblems.append(why) }
        }
    }

    mutating func record(_ outcome: FileFetcher.Outcome, file: ArchivedFile) {
        switch outcome {
        case .downloaded(let size, let deduplicated):
            downloaded += 1
            bytes += size
            if deduplicated { self.deduplicated += 1 }
        case .alreadyThere: alreadyThere += 1
        case .gone: gone += 1
        case .refused(let why):
            refused += 1
            if problems.count < 20 { problems.append(why) }
        case .tooLarge: tooLarge += 1
        case .failed(let why):
            failed += 1
            if problems.count < 20 { problems.append(why) }
        case .external: external += 1
        }
    }
}

/// Why a run of ``FileFetcher`` stopped; `description` is what the user sees.
public enum FileFetchError: Error, CustomStringConvertible, Sendable {
    /// `files` files failed after their retries, and none was downloaded in between.
    case hostFailing(files: Int, last: String)

    public var description: String {
        switch self {
        case .hostFailing(let files, let last):
            "Stopped: \(files) files failed one after another, none downloaded in between (last: \(last)). Check the network, then run the same command "
                + "again: the files stored so far stay and only the missing ones are fetched."
        }
    }
}
