import ArgumentParser
import Foundation
import SlackIndex
import Synchronization

struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "Fetch the archive's files (attachments, snippets, images) from Slack, to keep them offline.",
        discussion: """
            Downloads each file the archive's messages carry from its url_private_download (else url_private), \
            with the Slack token, into the file store beside the archive (archive.sqlite → archive.files/), \
            where each content is kept once under its SHA-256. A file counts as fetched only once its bytes are \
            whole on disk, so an interrupted run (Ctrl-C, kill -9, a full disk) loses nothing and the same command \
            again fetches only what is missing. A few requests run at once; HTTP 429 Retry-After is honoured \
            exactly, 5xx answers and dropped connections are retried with backoff. Deleted files (tombstones, \
            hidden_by_limit, 404) are counted as gone; files hosted elsewhere (external) are left there and the \
            token is only ever sent to *.slack.com (or to --file-host). `serve` shows what was fetched. For \
            each stored image over 64 KiB, Slack's thumbnail (thumb_480, else the nearest size) is stored too: \
            the web UI shows it and opens the whole image on a click.

            Then the workspace's images, which the web UI shows from the archive: members' profile images (the \
            URLs users.json or a sync recorded) and custom emoji, listed with emoji.list (the token needs \
            emoji:read; exports carry no emoji, so this is how an imported archive gets them; aliases are kept \
            and resolved). These are public URLs: the token is never sent with them. Only PNG, JPEG, GIF and WebP \
            images are stored. --no-avatars and --no-emoji leave them out.

            The token comes from SLACK_TOKEN, else "token" in the config file, as for sync (a user token with \
            files:read).

            Exit status: 0 every file and image selected is stored, 2 some were not (gone, refused, too large, \
            failed, or emoji.list refused: the report says how many of each), 1 the run could not go on (a full \
            disk: what was stored stays).

            Examples:
              SLACK_TOKEN=xoxp-… slackindex files
              slackindex files --conversation general --after 2024-01-01 --types images,pdfs
              slackindex files --max-size 10MB --json
              slackindex files --types images --no-emoji
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Only files in this conversation (id or name); repeatable.", valueName: "conversation"))
    var conversation: [String] = []

    @Option(help: ArgumentHelp("Only files of messages at or after this point (a date or a ts).", valueName: "point"))
    var after: String?

    @Option(help: ArgumentHelp("Only files of messages before this point (a date or a ts).", valueName: "point"))
    var before: String?

    @Option(
        help: ArgumentHelp(
            "Skip files larger than this (500KB, 10MB, 2GB; 0 for no cap; default 100MB).", valueName: "size"))
    var maxSize: String?

    @Option(
        help: ArgumentHelp(
            "Only these kinds, comma-separated: images, snippets, posts, pdfs, zips, or file types and extensions "
                + "(png, csv, …).", valueName: "types"))
    var types: String?

    @Option(help: ArgumentHelp("Requests at once (1-16).", valueName: "n"))
    var parallel = 4

    @Option(
        help: ArgumentHelp(
            "Fetch from this http(s)://host[:port] instead of each file's and image's own host (a mirror of "
                + "Slack's file host); the token is sent there with files.", valueName: "url"))
    var fileHost: String?

    @Option(
        help: ArgumentHelp(
            "The Web API base URL emoji.list is asked of (default: --file-host's /api/, else the config file's "
                + "\"api\", else https://slack.com/api/).", valueName: "url"))
    var api: String?

    @Flag(help: "Do not fetch members' profile images.")
    var noAvatars = false

    @Flag(help: "Do not list or fetch custom emoji.")
    var noEmoji = false

    @Option(help: ArgumentHelp("Time zone for dates (default: the system's).", valueName: "zone"))
    var tz: String?

    @Flag(help: "No progress output.")
    var quiet = false

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    private var timeZone: TimeZone { tz.flatMap(TimeZone.init(identifier:)) ?? .current }

    func validate() throws {
        guard (1...16).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 16.") }
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("--tz '\(tz)' is not a time zone; use a name such as Europe/Paris or UTC.")
        }
        for (flag, value) in [("--after", after), ("--before", before)] {
            if let value, TimelinePoint.parse(value, timeZone: timeZone) == nil {
                throw ValidationError(
                    "\(flag) '\(value)' is not a point in time. It takes a ts (1714000000.000100), "
                        + DateExpression.acceptedForms + ".")
            }
        }
        if let maxSize, Self.parseSize(maxSize) == nil {
            throw ValidationError("--max-size '\(maxSize)' is not a size; write e.g. 500KB, 10MB, 2GB or 0.")
        }
        if let fileHost {
            guard let url = URL(string: fileHost), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else { throw ValidationError("--file-host '\(fileHost)' is not an http(s) URL.") }
        }
    }

    /// `10MB` → 10,000,000 (decimal units, as `Output.bytes` prints them; `K`, `M`, `G`, with or without `B`);
    /// 0 means no cap.
    static func parseSize(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard let value = Double(digits), value >= 0 else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        let scale: Double
        switch unit {
        case "", "B": scale = 1
        case "K", "KB": scale = 1e3
        case "M", "MB": scale = 1e6
        case "G", "GB": scale = 1e9
        default: return nil
        }
        return Int64(value * scale)
    }

    func run() async throws {
        let token = try Config.token()
        let archive = try global.openArchive()
        var options = FileFetcher.Options()
        options.conversations = conversation.isEmpty ? nil : conversation
        options.lowerTSKey = after.flatMap { TimelinePoint.parse($0, timeZone: timeZone)?.tsKey }
        options.upperTSKey = before.flatMap { TimelinePoint.parse($0, timeZone: timeZone)?.tsKey }
        if let maxSize, let bytes = Self.parseSize(maxSize) { options.maxBytes = bytes == 0 ? nil : bytes }
        options.types = types.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
        options.parallel = parallel
        options.fileHost = fileHost
        // Files are on another host than the API: the client's base URL only checks the token's transport rules.
        let client = try SlackWebClient(baseURL: fileHost ?? SlackWebClient.slackAPI, token: token)
        let blobs = FileBlobs(archivePath: archive.path)
        let fetcher = FileFetcher(archive: archive, client: client, blobs: blobs, options: options)
        let line = StatusLine(enabled: !quiet)
        let apiClient = noEmoji ? nil : try SlackWebClient(baseURL: try apiURL(), token: token)
        var imageOptions = ImageFetcher.Options()
        imageOptions.avatars = !noAvatars
        imageOptions.emoji = !noEmoji
        imageOptions.parallel = parallel
        imageOptions.fileHost = fileHost
        let imageFetcher = ImageFetcher(
            archive: archive, api: apiClient, downloads: client, blobs: blobs, options: imageOptions)
        let fetchImages = !noAvatars || !noEmoji
        let work = Task { () -> (FileFetcher.Report, ImageFetcher.Report) in
            let files = try await fetcher.run { p in
                guard line.due() else { return }
                let rate = p.elapsed > 0 ? Double(p.bytes) / p.elapsed : 0
                line.show(
                    "files: \(Output.count(p.done))/\(Output.count(p.total)), \(Output.count(p.downloaded)) "
                        + "downloaded, \(Output.bytes(p.bytes)) (\(Output.bytes(Int64(rate)))/s)")
            }
            if fetchImages { line.show("avatars and custom emoji…") }
            return (files, fetchImages ? try await imageFetcher.run() : ImageFetcher.Report())
        }
        let interrupts = InterruptHandler {
            work.cancel()
            Output.error("\nStopping (Ctrl-C again quits at once).")
        }
        defer { interrupts.cancel() }
        let report: FileFetcher.Report
        let images: ImageFetcher.Report
        do {
            (report, images) = try await work.value
            line.finish()
            await client.shutdown()
            await apiClient?.shutdown()
        } catch {
            line.finish()
            await client.shutdown()
            await apiClient?.shutdown()
            guard work.isCancelled else { throw error }
            Output.error("Interrupted: every file stored so far stays; `slackindex files` again fetches the rest.")
            throw ExitCode(ExitStatus.interrupted)
        }
        if json {
            Output.json(FilesOutput(files: report, images: images))
        } else {
            Self.printReport(report, store: blobs.root)
            Self.printImages(images, avatars: !noAvatars, emoji: !noEmoji)
        }
        if report.notFetched + images.notFetched > 0 { throw ExitCode(ExitStatus.partial) }
    }

    /// Where emoji.list is asked: --api, else --file-host's /api/ (a mirror of Slack), else the config file's.
    private func apiURL() throws -> String {
        if let api { return api }
        if let fileHost { return (fileHost.hasSuffix("/") ? fileHost : fileHost + "/") + "api/" }
        return try Config.load().api ?? SlackWebClient.slackAPI
    }

    static func printImages(_ r: ImageFetcher.Report, avatars: Bool, emoji: Bool) {
        func counts(_ c: ImageFetcher.Counts) -> String {
            "\(Output.count(c.downloaded + c.alreadyThere)) of \(Output.count(c.total)) stored (downloaded "
                + "\(Output.count(c.downloaded)), \(Output.bytes(c.bytes)); already there \(Output.count(c.alreadyThere))), "
                + "gone \(Output.count(c.gone)), failed \(Output.count(c.failed))"
        }
        if avatars { Output.line("Avatars: " + counts(r.avatars) + ".") }
        if emoji {
            let listed = r.emojiListed.map { "emoji.list gave \(Output.count($0)) (\(Output.count(r.emojiAliases)) aliases); " } ?? ""
            Output.line("Custom emoji: " + listed + "images " + counts(r.emoji) + ".")
        }
        Output.line(String(format: "  avatars and emoji in %.1f s.", r.seconds))
        for problem in r.problems { Output.error("Not fetched: \(problem)") }
        if let error = r.emojiListError { Output.error("Custom emoji not listed: \(error)") }
    }

    static func printReport(_ r: FileFetcher.Report, store: String) {
        let seconds = max(r.seconds, 0.001)
        Output.line(
            "Fetched \(Output.count(r.downloaded)) of \(Output.count(r.files)) files (\(Output.bytes(r.bytes))) into "
                + "\(store) in " + String(format: "%.1f s", r.seconds) + " ("
                + String(format: "%.1f files/s, %@/s", Double(r.downloaded) / seconds, Output.bytes(Int64(Double(r.bytes) / seconds)))
                + ").")
        Output.line(
            "  downloaded \(Output.count(r.downloaded)), already there \(Output.count(r.alreadyThere)), "
                + "gone \(Output.count(r.gone)), refused \(Output.count(r.refused)), too large \(Output.count(r.tooLarge)), "
                + "failed \(Output.count(r.failed)), external \(Output.count(r.external))")
        if r.pdfsWithoutText > 0 {
            Output.line(
                "  \(Output.count(r.pdfsWithoutText)) PDFs are stored but their text is not searchable: install "
                    + "poppler-utils (pdftotext), then run `slackindex files` again.")
        }
        if r.deduplicated > 0 { Output.line("  \(Output.count(r.deduplicated)) had the same bytes as a stored file: kept once.") }
        if r.thumbnails + r.thumbnailsAlreadyThere + r.thumbnailsGone + r.thumbnailsFailed > 0 {
            Output.line(
                "  thumbnails of images: \(Output.count(r.thumbnails)) stored, \(Output.count(r.thumbnailsAlreadyThere)) "
                    + "already there, \(Output.count(r.thumbnailsGone)) gone, \(Output.count(r.thumbnailsFailed)) not "
                    + "stored (the whole image is shown instead)")
        }
        Output.line(
            "  \(Output.count(r.requests)) requests, \(r.rateLimited) rate-limited, "
                + String(format: "%.1f s waited.", r.waitedSeconds))
        for problem in r.problems { Output.error("Not fetched: \(problem)") }
        for problem in r.thumbnailProblems { Output.error("Thumbnail not stored: \(problem)") }
        if r.refused > 0 {
            Output.error("Refused files need a user token with files:read (SLACK_TOKEN); run again with it.")
        }
    }
}

/// `files --json`: the files' report, and the avatars' and emoji's under their own keys.
struct FilesOutput: Encodable {
    var files: FileFetcher.Report
    var images: ImageFetcher.Report

    func encode(to encoder: any Encoder) throws {
        try files.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(images.avatars, forKey: .avatars)
        try container.encode(images.emoji, forKey: .emoji)
        try container.encodeIfPresent(images.emojiListed, forKey: .emojiListed)
        try container.encode(images.emojiAliases, forKey: .emojiAliases)
        try container.encodeIfPresent(images.emojiListError, forKey: .emojiListError)
        try container.encode(images.problems, forKey: .imageProblems)
        try container.encode(images.seconds, forKey: .imageSeconds)
    }

    private enum Keys: String, CodingKey {
        case avatars, emoji
        case emojiListed = "emoji_listed"
        case emojiAliases = "emoji_aliases"
        case emojiListError = "emoji_list_error"
        case imageProblems = "image_problems"
        case imageSeconds = "image_seconds"
    }
}
