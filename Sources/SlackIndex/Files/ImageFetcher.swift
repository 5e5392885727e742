import Foundation
import SlackIndexStore
import Synchronization

/// Fetches the workspace's images into the file store beside the archive (``FileBlobs``): members' profile images
/// (the `image_72` URL an import or sync recorded from `users.json` / `users.list`) and custom emoji (`emoji.list`,
/// called with the token; aliases are recorded as such and resolved when read).
///
/// Both are public URLs at Slack (`avatars.slack-edge.com`, `emoji.slack-edge.com`, gravatar): the token is never
/// sent with them. Only bytes that are a PNG, JPEG, GIF or WebP image are stored (never SVG or HTML, whatever the
/// URL says). An image already stored from the same URL is not asked for again; a member who changed their picture
/// has a new URL, fetched on the next run, and the old image is shown until then.
public struct ImageFetcher: Sendable {
    /// What to fetch and how.
    public struct Options: Sendable {
        public var avatars = true
        public var emoji = true
        /// Requests at once.
        public var parallel = 4
        /// An image larger than this is not stored.
        public var maxBytes: Int64 = ImageFetcher.defaultMaxBytes
        /// Fetch from this `scheme://host[:port]` instead of each URL's own (a mirror, or a test stand-in).
        public var fileHost: String?

        public init() {}
    }

    /// The cap on one image: 5 MB (Slack's custom emoji are at most 128 KB; profile images are small).
    public static let defaultMaxBytes: Int64 = 5_000_000

    /// What became of one kind of image, each counted once.
    public struct Counts: Sendable, Codable, Equatable {
        /// Images the archive knows (avatars: members with a profile image URL; emoji: names with an image).
        public var total = 0
        public var downloaded = 0
        /// Stored by an earlier run from the same URL: not asked for.
        public var alreadyThere = 0
        /// 404 or 410 at Slack.
        public var gone = 0
        /// Not an image (HTML, SVG, other bytes), larger than the cap, another HTTP status, or still failing after
        /// the retries.
        public var failed = 0
        /// Bytes stored by this run.
        public var bytes: Int64 = 0

        public init() {}

        private enum CodingKeys: String, CodingKey {
            case total, downloaded, gone, failed, bytes
            case alreadyThere = "already_there"
        }
    }

    /// What a run did.
    public struct Report: Sendable, Codable, Equatable {
        public var avatars = Counts()
        public var emoji = Counts()
        /// Names `emoji.list` gave (images and aliases); nil when it was not asked or failed.
        public var emojiListed: Int?
        /// Of those, aliases (`alias:other`).
        public var emojiAliases = 0
        /// Why `emoji.list` gave nothing (`missing_scope`: the token lacks `emoji:read`).
        public var emojiListError: String?
        /// Images not fetched, with the reason: at most 20.
        public var problems: [String] = []
        /// How long the run took (the list and the images).
        public var seconds: Double = 0

        /// Images that should be stored and are not, plus one for a list that could not be read.
        public var notFetched: Int {
            avatars.gone + avatars.failed + emoji.gone + emoji.failed + (emojiListError == nil ? 0 : 1)
        }

        public init() {}

        private enum CodingKeys: String, CodingKey {
            case avatars, emoji, problems, seconds
            case emojiListed = "emoji_listed"
            case emojiAliases = "emoji_aliases"
            case emojiListError = "emoji_list_error"
        }
    }

    private let archive: any WorkspaceImages
    private let api: SlackWebClient?
    private let downloads: SlackWebClient
    private let blobs: FileBlobs
    private let options: Options

    /// - Parameters:
    ///   - api: the Web API `emoji.list` is asked of (with its token); nil to use the emoji the archive has.
    ///   - downloads: the client images are fetched with (its token is never sent).
    public init(
        archive: Archive, api: SlackWebClient?, downloads: SlackWebClient, blobs: FileBlobs? = nil,
        options: Options = Options()
    ) {
        self.archive = archive.store
        self.api = api
        self.downloads = downloads
        self.blobs = blobs ?? FileBlobs(archivePath: archive.path)
        self.options = options
    }

    /// Lists the custom emoji (when asked), then fetches the avatars and emoji images that are missing.
    ///
    /// - Throws: `FileStoreError` or `StoreError.writeFailed` when the store cannot be written (a full disk: what
    ///   was stored stays), `CancellationError`.
    public func run() async throws -> Report {
        let started = ContinuousClock.now
        var report = Report()
        if options.emoji, let api {
            do {
                let emoji = try Self.parseEmojiList(try await api.call("emoji.list"))
                try archive.storeCustomEmoji(emoji)
                report.emojiListed = emoji.count
                report.emojiAliases = emoji.filter { $0.aliasOf != nil }.count
            } catch let error as RemoteError {
                report.emojiListError = Self.explain(error)
            }
        }
        blobs.removeAbandonedTemporaries()
        let state = RunState(report)
        for kind in WorkspaceImage.Kind.allCases {
            guard kind == .avatar ? options.avatars : options.emoji else { continue }
            let images = try archive.workspaceImages(kind)
            state.report.withLock { $0[kind].total = images.count }
            state.next.withLock { $0 = 0 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<max(1, min(options.parallel, images.count)) {
                    group.addTask {
                        while true {
                            try Task.checkCancellation()
                            let index = state.next.withLock { n -> Int in
                                defer { n += 1 }
                                return n
                            }
                            guard index < images.count else { return }
                            let outcome = try await fetch(images[index])
                            state.report.withLock { $0.record(outcome, kind: kind, key: images[index].key) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var done = state.report.withLock { $0 }
        done.seconds = (ContinuousClock.now - started).seconds
        return done
    }

    /// The workers' shared place: the next image to take and the report.
    private final class RunState: Sendable {
        let report: Mutex<Report>
        let next = Mutex(0)

        init(_ report: Report) {
            self.report = Mutex(report)
        }
    }

    /// What became of one image.
    enum Outcome {
        case downloaded(Int64)
        case alreadyThere
        case gone
        case failed(String)
    }

    private func fetch(_ image: WorkspaceImage) async throws -> Outcome {
        if let blob = image.blob, image.fetchedURL == image.url, blobs.contains(blob.sha256, size: blob.size) {
            return .alreadyThere
        }
        guard let url = target(of: image.url) else { return .failed("not an http(s) URL") }
        let result: SlackWebClient.Download
        do {
            result = try await downloads.download(
                url, label: "\(image.kind.rawValue) \(image.key)", authorized: false, maxBytes: options.maxBytes,
                into: blobs)
        } catch let error as RemoteError {
            return .failed("\(error)")
        }
        switch result {
        case .status(404), .status(410): return .gone
        case .status(let status): return .failed("HTTP \(status)")
        case .tooLarge: return .failed("larger than \(options.maxBytes) bytes")
        case .complete(let writer, _):
            switch try writer.commitImage() {
            case .failure(let other): return .failed("not an image (\(other.type))")
            case .success(let blob):
                try archive.recordImageBlob(image.kind, key: image.key, url: image.url, blob: blob)
                return .downloaded(blob.size)
            }
        }
    }

    /// The URL to fetch: the image's own (http or https), or its path and query on ``Options/fileHost``.
    func target(of url: String) -> String? {
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
            ["http", "https"].contains(scheme), parsed.host != nil
        else { return nil }
        guard let fileHost = options.fileHost, var base = URLComponents(string: fileHost) else { return url }
        base.percentEncodedPath = parsed.percentEncodedPath
        base.percentEncodedQuery = parsed.percentEncodedQuery
        return base.string
    }

    /// `emoji.list`'s `emoji` object: name → image URL or `alias:<name>`. Names and values that are not strings
    /// are skipped.
    ///
    /// - Throws: ``RemoteError/api(method:error:)`` (`invalid_response`) when the answer has no `emoji` object.
    static func parseEmojiList(_ body: [UInt8]) throws -> [CustomEmoji] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let emoji = object["emoji"] as? [String: Any]
        else { throw RemoteError.api(method: "emoji.list", error: "invalid_response") }
        return emoji.compactMap { name, value -> CustomEmoji? in
            guard let value = value as? String, !name.isEmpty, name.utf8.count <= 100 else { return nil }
            if value.hasPrefix("alias:") {
                let target = String(value.dropFirst(6))
                return target.isEmpty ? nil : CustomEmoji(name: name, aliasOf: target)
            }
            return CustomEmoji(name: name, url: value)
        }.sorted { $0.name < $1.name }
    }

    /// `emoji.list`'s failure as the user reads it.
    static func explain(_ error: RemoteError) -> String {
        if case .api(_, let code) = error, code == "missing_scope" {
            return "emoji.list: missing_scope (the token needs the emoji:read scope)"
        }
        return "\(error)"
    }
}

extension ImageFetcher.Report {
    subscript(kind: WorkspaceImage.Kind) -> ImageFetcher.Counts {
        get { kind == .avatar ? avatars : emoji }
        set {
            if kind == .avatar { avatars = newValue } else { emoji = newValue }
        }
    }

    mutating func record(_ outcome: ImageFetcher.Outcome, kind: WorkspaceImage.Kind, key: String) {
        switch outcome {
        case .downloaded(let size):
            self[kind].downloaded += 1
            self[kind].bytes += size
        case .alreadyThere: self[kind].alreadyThere += 1
        case .gone: self[kind].gone += 1
        case .failed(let why):
            self[kind].failed += 1
            if problems.count < 20 { problems.append("\(kind.rawValue) \(key): \(why)") }
        }
    }
}
