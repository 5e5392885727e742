import ArgumentParser
import Foundation
import SlackIndex
import Synchronization

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Bring the archive up to date from Slack's Web API (or another archive's `serve`).",
        discussion: """
            Lists users and conversations, then fetches each conversation's history from the newest \
            message the archive has (nothing it holds is fetched again) and the replies of threads with \
            new activity. Every page is stored with where the next one starts, so an interrupted sync \
            (Ctrl-C, kill, network loss) resumes where it stopped when run again. HTTP 429 Retry-After is \
            honoured exactly; 5xx answers and dropped connections are retried with backoff.

            The token comes from SLACK_TOKEN, else "token" in the config file (which must then be \
            readable by its owner only: chmod 600). It is never printed.

            Exit status: 0 done, 2 done but some conversations or messages were refused or skipped, \
            1 the sync could not run or stopped (a full disk: what it committed stays, counted in the summary, \
            and running it again continues), 130 stopped by Ctrl-C (what was fetched is saved; \
            running it again continues).

            Examples:
              SLACK_TOKEN=xoxp-… slackindex sync
              slackindex sync --api http://127.0.0.1:8080/api/ --conversation general
              slackindex sync --files             # then fetch the files, avatars and custom emoji (see files)
            """)

    @OptionGroup var global: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "The Web API base URL (default: the config file's \"api\", else https://slack.com/api/).",
            valueName: "url"))
    var api: String?

    @Option(help: ArgumentHelp("Only this conversation (id or name); repeatable.", valueName: "conversation"))
    var conversation: [String] = []

    @Option(help: ArgumentHelp("Messages per request.", valueName: "n"))
    var pageSize = 200

    @Flag(help: "Do not fetch thread replies now; their threads stay queued for the next sync.")
    var noThreads = false

    @Flag(help: "Fetch whole histories again, ignoring where the last sync stopped (still adds nothing twice).")
    var full = false

    @Flag(help: "Then fetch the files of the synced conversations, the avatars and the custom emoji, as `files` does.")
    var files = false

    @Option(
        help: ArgumentHelp(
            "With --files: fetch files from this http(s)://host[:port] instead of each file's own host.",
            valueName: "url"))
    var fileHost: String?

    @Flag(help: "No progress output.")
    var quiet = false

    @Flag(help: "Print the summary as one JSON object.")
    var json = false

    func validate() throws {
        guard (1...1000).contains(pageSize) else { throw ValidationError("--page-size must be between 1 and 1000.") }
        if fileHost != nil, !files { throw ValidationError("--file-host goes with --files.") }
    }

    func run() async throws {
        let config = try Config.load()
        let token = try Config.token()
        let archive = try global.openArchive()
        let client = try SlackWebClient(baseURL: api ?? config.api ?? SlackWebClient.slackAPI, token: token)
        var options = Synchronizer.Options()
        options.pageSize = pageSize
        options.threads = !noThreads
        options.full = full
        options.conversations = conversation.isEmpty ? nil : conversation
        let synchronizer = Synchronizer(archive: archive, client: client, options: options)
        let reporter = SyncProgressReporter(enabled: !quiet)
        let work = Task { try await synchronizer.run { reporter.update($0) } }
        let interrupts = InterruptHandler {
            work.cancel()
            Output.error("\nStopping (Ctrl-C again quits at once).")
        }
        defer { interrupts.cancel() }
        let summary: Synchronizer.Summary
        do {
            summary = try await work.value
            reporter.finish()
            await client.shutdown()
        } catch {
            reporter.finish()
            await client.shutdown()
            guard work.isCancelled else { throw error }
            // Every page was stored with its cursor in one transaction: nothing fetched is lost.
            Output.error(
                "Interrupted: \(Output.count(reporter.messagesSaved)) messages saved; `slackindex sync` again "
                    + "continues where this one stopped.")
            throw ExitCode(ExitStatus.interrupted)
        }
        var fetched: FilesOutput?
        if files, summary.stopped == nil {
            fetched = try await fetchFiles(archive: archive, token: token, api: client.baseURL)
        }
        if json {
            Output.json(SyncOutput(summary: summary, files: fetched))
        } else {
            let rate = Output.count(Int(summary.messagesPerSecond.rounded()))
            Output.line(
                (summary.stopped == nil ? "Synced" : "Stopped while syncing")
                    + " \(summary.conversations) conversations from \(client.baseURL) in "
                    + String(format: "%.1f s", summary.seconds) + ": "
                    + "\(Output.count(summary.messagesAdded)) new, \(Output.count(summary.messagesUpdated)) updated, "
                    + "\(Output.count(summary.messagesUnchanged)) unchanged messages (\(rate) msg/s).")
            Output.line(
                "\(summary.requests) requests (\(summary.historyPages) history pages, \(summary.repliesPages) replies "
                    + "pages for \(summary.threads) threads, \(summary.listPages) list pages); "
                    + "\(summary.rateLimited) rate-limited, \(summary.failures) retried, "
                    + String(format: "%.1f s waited.", summary.waitedSeconds))
            if summary.resumed > 0 {
                Output.line("Resumed \(summary.resumed) interrupted conversation histories.")
            }
            if summary.usersAdded + summary.conversationsAdded > 0 {
                Output.line("New: \(summary.usersAdded) users, \(summary.conversationsAdded) conversations.")
            }
            for refusal in summary.refused { Output.error("Skipped \(refusal)") }
            for (reason, count) in summary.skipReasons.sorted(by: { $0.key < $1.key }) {
                Output.error("Skipped \(count) messages: \(reason)")
            }
        }
        if let stopped = summary.stopped {
            // On stderr with --json too: stdout stays the one JSON object (as import does).
            Output.error("Error: the sync stopped: \(stopped) `slackindex sync` continues where this one stopped.")
            throw ExitCode(ExitStatus.failure)
        }
        if let fetched, !json {
            FilesCommand.printReport(fetched.files, store: FileBlobs(archivePath: archive.path).root)
            FilesCommand.printImages(fetched.images, avatars: true, emoji: true)
        }
        if !summary.refused.isEmpty || summary.messagesSkipped > 0
            || (fetched.map { $0.files.notFetched + $0.images.notFetched } ?? 0) > 0
        {
            throw ExitCode(ExitStatus.partial)
        }
    }

    /// `--files`: what `slackindex files` does, for the synced conversations (all when none was named), with the
    /// same token; custom emoji are asked of the same API.
    private func fetchFiles(archive: Archive, token: String, api: String) async throws -> FilesOutput {
        var options = FileFetcher.Options()
        options.conversations = conversation.isEmpty ? nil : conversation
        options.fileHost = fileHost
        let downloads = try SlackWebClient(baseURL: fileHost ?? SlackWebClient.slackAPI, token: token)
        let apiClient = try SlackWebClient(baseURL: api, token: token)
        var imageOptions = ImageFetcher.Options()
        imageOptions.fileHost = fileHost
        do {
            let files = try await FileFetcher(archive: archive, client: downloads, options: options).run()
            let images = try await ImageFetcher(
                archive: archive, api: apiClient, downloads: downloads, options: imageOptions
            ).run()
            await downloads.shutdown()
            await apiClient.shutdown()
            return FilesOutput(files: files, images: images)
        } catch {
            await downloads.shutdown()
            await apiClient.shutdown()
            throw error
        }
    }
}

/// Sync progress on stderr: one updating line on a terminal, a line every 5 s otherwise.
final class SyncProgressReporter: Sendable {
    private let line: StatusLine
    private let messages = Mutex(0)

    init(enabled: Bool) {
        line = StatusLine(enabled: enabled)
    }

    func update(_ p: Synchronizer.Progress) {
        messages.withLock { $0 = p.messages }
        guard line.due() else { return }
        let rate = p.elapsed > 0 ? Int(Double(p.messages) / p.elapsed) : 0
        var text =
            "sync \(p.phase): \(p.conversationsDone)/\(p.conversationsTotal) conversations, "
            + (p.threadsTotal > 0 ? "\(p.threadsDone)/\(p.threadsTotal) threads, " : "")
            + "\(Output.count(p.messages)) messages, \(Output.count(rate)) msg/s, \(p.requests) requests"
        if p.rateLimited + p.failures > 0 { text += " (\(p.rateLimited) rate-limited, \(p.failures) retried)" }
        line.show(text)
    }

    /// Messages stored so far, as the last progress report counted them.
    var messagesSaved: Int { messages.withLock { $0 } }

    func finish() {
        line.finish()
    }
}

/// `sync --json`: the summary, and with `--files` what was fetched under `files`.
struct SyncOutput: Encodable {
    var summary: Synchronizer.Summary
    var files: FilesOutput?

    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(files, forKey: .files)
    }

    private enum Keys: String, CodingKey {
        case files
    }
}
