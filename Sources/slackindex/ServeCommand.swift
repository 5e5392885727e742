import ArgumentParser
import Foundation
import Hummingbird
import Logging
import SlackIndex
import SlackIndexServer
import Synchronization

/// `slackindex serve`: the archive as a Slack-compatible Web API subset over HTTP.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the archive in a browser (web UI) and as a subset of Slack's Web API.",
        discussion: """
            Answers auth.test, users.list, users.info, conversations.list, conversations.info, \
            conversations.history, conversations.replies, search.messages and chat.getPermalink at \
            http://HOST:PORT/api/METHOD, as Slack does (GET or POST, `Authorization: Bearer TOKEN`). \
            Make tokens with `slackindex token create`. GET /healthz (no token) answers 200 while the archive \
            answers, else 503, for load balancers. Prints the API's URL once listening, then the web UI's; stops \
            on Ctrl-C (SIGINT) or SIGTERM.

            The web UI at http://HOST:PORT/ reads and searches the archive in a browser: everything it needs \
            is in this binary and it makes no outside request. Sign in with a token (the browser keeps an \
            HttpOnly session cookie; it sees what the token sees), or with --open for a one-time link as the \
            archive's owner (an admin's view; --as names who that is, for from:me). A link works once, for \
            \(Self.minutes(WebUI.Limits().codeLifetime)) minutes; `kill -USR1 PID` (the PID is printed) prints a new \
            one without a restart. --ui off serves the API alone.

            \(limitsHelp)

            With --remote URL, search.messages (and the web UI's search) also asks that Slack-compatible API \
            and merges its hits into the first page, each marked local, remote or both; a remote hit is shown \
            only in a conversation the archive has and the token sees. The remote gets --remote-deadline \
            seconds; late or failing, the archive's hits come alone with remote_problem saying why.

            With --metrics, GET /metrics (no token: scrape it from loopback or an internal network) answers \
            Prometheus' text format: requests by method and status, their durations, searches, rate-limited \
            requests, database connections, messages stored and sync progress (docs/serve.md). Logs go to \
            stderr as key=value pairs (--log-format json for JSON), one line per request at --log-level info; \
            they never hold a token, a cookie, a search's words or message text.

            Examples:
              TOKEN=$(slackindex token create --user U0123ABCD)
              slackindex serve --open --as @alice
              slackindex serve --listen 127.0.0.1:8080
              slackindex serve --read-only --db /mnt/archive/archive.sqlite
              slackindex serve --metrics --log-level info --log-format json
              curl -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:8080/api/search.messages?query=deploy'
            """)

    /// The limits `serve` keeps, from their defaults (`WebUI.Limits`, `SlackAPIConfiguration`).
    static var limitsHelp: String {
        let ui = WebUI.Limits()
        let api = SlackAPIConfiguration()
        func rate(_ limit: RateLimit) -> String {
            "\(limit.requests) per \(limit.interval.components.seconds) s"
        }
        return """
            Limits: sign-ins \(rate(ui.signInsPerToken)) per token and \(rate(ui.signInsPerAddress)) per client \
            address; \(ui.sessionsPerToken) sessions per token (a new one ends that token's oldest, never another's \
            or the owner's); a session ends \(minutes(ui.sessionIdle) / 60) hours unused or \
            \(minutes(ui.sessionLifetime) / 1440) days after sign-in. Sign-in and sign-out from another site's page \
            are refused. \(api.maxConnections) connections, \(api.maxConnectionsPerAddress) per client address: past \
            either, the connection idle longest is closed to make room, and with more than \(api.maxConnections / 2) \
            open, idle ones close after \(api.busyIdleTimeout.components.seconds) s instead of \
            \(api.idleTimeout.components.seconds) s. Search scores are 1/rank, so they tell a token nothing about \
            conversations it cannot read.
            """
    }

    /// Whole minutes in `duration`.
    static func minutes(_ duration: Duration) -> Int64 { duration.components.seconds / 60 }

    @OptionGroup var global: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "Address and port to listen on; port 0 picks a free one (printed at start).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(
        name: .customLong("rate-limit"),
        help: ArgumentHelp("Requests each token may make per interval: N/SECONDS.", valueName: "n/seconds"))
    var rateLimit = RateLimit.standard.description

    @Flag(
        name: .customLong("read-only"),
        help: ArgumentHelp(
            "Open the archive read-only: never written or upgraded; works on a read-only file, folder or mount."))
    var readOnly = false

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL hot standby of --db's database (postgresql://…): reads go there while it answers, writes "
                + "(sign-ins) to --db; with the primary down, reads go on from it, and a promoted standby takes the "
                + "writes without a restart.",
            valueName: "url"))
    var replica: String?

    @Option(help: ArgumentHelp("The web UI at /: on or off (off serves the API alone).", valueName: "on|off"))
    var ui: UIMode = .on

    @Flag(
        help: ArgumentHelp(
            "Print a one-time link that signs a browser in to the web UI as the archive's owner (sees every "
                + "conversation); loopback addresses only."))
    var open = false

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "With --open: who the owner's session is (from:me, the name shown): a handle or name (default: "
                + "$SLACKINDEX_ME, else \"me\" in the config file).", valueName: "user"))
    var asUser: String?

    @Option(
        help: ArgumentHelp(
            "Merge this Slack-compatible Web API's search.messages into search's first page, each hit marked "
                + "local, remote or both (token: $SLACKINDEX_REMOTE_TOKEN or \"remote_token\" in the config file).",
            valueName: "url"))
    var remote: String?

    @Option(
        name: .customLong("remote-deadline"),
        help: ArgumentHelp("With --remote: seconds a search waits for the remote at most (default 1.5).", valueName: "seconds"))
    var remoteDeadline: Double?

    @Flag(
        help: ArgumentHelp(
            "Serve Prometheus metrics at GET /metrics, without a token (off: 404 there)."))
    var metrics = false

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "Logs to stderr at this level and above: trace, debug, info (a line per request), notice (start and "
                + "stop), warning or error.", valueName: "level"))
    var logLevel: Logger.Level = .notice

    @Option(
        name: .customLong("log-format"),
        help: ArgumentHelp("Log lines as key=value pairs (logfmt) or JSON objects.", valueName: "logfmt|json"))
    var logFormat: ServeLogHandler.Format = .logfmt

    enum UIMode: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    func validate() throws {
        guard Self.address(listen) != nil else {
            throw ValidationError("--listen '\(listen)' is not HOST:PORT (e.g. 127.0.0.1:8080, [::1]:0).")
        }
        guard RateLimit(parsing: rateLimit) != nil else {
            throw ValidationError("--rate-limit '\(rateLimit)' is not N/SECONDS (e.g. 100/10 for 100 requests in 10 s).")
        }
        if asUser != nil, !open { throw ValidationError("--as names the owner's session: it needs --open.") }
        if remote == nil, remoteDeadline != nil {
            throw ValidationError("--remote-deadline is how long search waits for --remote: it needs --remote URL.")
        }
        guard (0...600).contains(remoteDeadline ?? 1.5), remoteDeadline ?? 1.5 > 0 else {
            throw ValidationError("--remote-deadline must be between 0 and 600 seconds.")
        }
        if open {
            guard ui == .on else { throw ValidationError("--open signs in to the web UI: it needs --ui on.") }
            guard let host = Self.address(listen)?.host, SlackAPIServer.isLoopback(host) else {
                throw ValidationError(
                    "--open prints a sign-in link with an admin's view: it works on loopback addresses only (127.0.0.1, [::1]).")
            }
        }
    }

    /// The user id of the owner's session: `--as` (an error when it names no one), else `$SLACKINDEX_ME`, else
    /// the config file's `me` (a warning when the archive has no such user: one config may serve several
    /// archives); empty when none is set or found (then `from:me` matches no one).
    private func owner(_ archive: Archive) throws -> String {
        let engine = SearchEngine(archive: archive)
        if let asUser { return try engine.userID(named: asUser) }
        let environment = ProcessInfo.processInfo.environment["SLACKINDEX_ME"]
        guard let me = try environment ?? Config.load().me else { return "" }
        do {
            return try engine.userID(named: me)
        } catch {
            let source = environment != nil ? "$SLACKINDEX_ME" : "\"me\" in \(Config.path())"
            Output.error("warning: \(source) is '\(me)', not a user of this archive: the owner's session has no user (--as NAME names one).")
            return ""
        }
    }

    /// `host:port` or `[v6]:port` → (host, port).
    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65_535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }

    func run() async throws {
        guard let (host, port) = Self.address(listen), let limit = RateLimit(parsing: rateLimit) else { return }
        let archive = try readOnly
            ? global.openArchive(.readOnly, replica: replica) : global.openExistingArchive(replica: replica)
        if !SlackAPIServer.isLoopback(host) {
            Output.error(
                "warning: listening on \(host), which other machines may reach: anyone with a token can read "
                    + "what it sees. Use 127.0.0.1 unless you mean it.")
        }
        let path = archive.path
        let urlHost = host.contains(":") ? "[\(host)]" : host
        let webUI = ui == .on ? WebUI() : nil
        let links = try open ? webUI.map { OwnerLinks(ui: $0, ownerID: try owner(archive)) } : nil
        // Without --open, SIGUSR1 says why there is no link instead of ending the server (its default action).
        let newLinks = SignalWatcher(SIGUSR1) {
            guard let links else {
                return Output.error("No sign-in link: serve prints one only when started with --open (and --ui on).")
            }
            links.printLink()
        }
        var configuration = SlackAPIConfiguration(rateLimit: limit)
        let deadline = Duration.seconds(remoteDeadline ?? 1.5)
        let client = try remote.map {
            try SlackWebClient(baseURL: $0, token: try Config.remoteToken(for: $0), policy: .interactive(deadline: deadline))
        }
        configuration.remote = client.map(SlackRemoteSearch.init)
        configuration.remoteDeadline = deadline
        if metrics {
            let counts = ServeMetrics()
            counts.bootstrapProcess()
            configuration.metrics = counts
        }
        let logger = ServeLogHandler.logger(level: logLevel, format: logFormat) { Output.error($0) }
        let app = SlackAPIServer.makeApplication(
            archive: archive, configuration: configuration, host: host, port: port, ui: webUI, logger: logger
        ) { bound in
            logger.notice(
                "serving",
                metadata: [
                    "address": "\(urlHost):\(bound)", "archive": "\(path)", "metrics": "\(metrics)",
                    "ui": "\(webUI != nil)", "read_only": "\(readOnly)",
                ])
            Output.line("Serving \(path) at http://\(urlHost):\(bound)/api/")
            if webUI != nil { Output.line("Web UI at http://\(urlHost):\(bound)/") }
            if let links {
                links.listening(at: "http://\(urlHost):\(bound)")
                Output.line("A new sign-in link: kill -USR1 \(ProcessInfo.processInfo.processIdentifier)")
            }
            if let remote { Output.line("Search also asks \(remote)") }
            Output.flush()
        }
        do {
            try await app.runService()
        } catch {
            logger.error("stopped", metadata: ["error": "\(error)"])
            newLinks.cancel()
            await client?.shutdown()
            throw error
        }
        logger.notice("stopped")
        newLinks.cancel()
        await client?.shutdown()
    }
}

/// `serve --open`'s sign-in links as the archive's owner: the first once the server listens, and a new one on
/// each SIGUSR1, so the owner can sign in again (after the session ended, or in another browser) without a restart.
private final class OwnerLinks: Sendable {
    let ui: WebUI
    let ownerID: String
    /// `http://HOST:PORT`, once listening.
    private let base = Mutex<String?>(nil)

    init(ui: WebUI, ownerID: String) {
        self.ui = ui
        self.ownerID = ownerID
    }

    /// Prints the first link.
    func listening(at base: String) {
        self.base.withLock { $0 = base }
        printLink()
    }

    /// Prints a new one-time link (nothing before the server listens).
    func printLink() {
        guard let base = base.withLock({ $0 }) else { return }
        Output.line("Sign in once at \(base)\(ui.oneTimeSignInPath(userID: ownerID))")
        Output.flush()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ServeLogHandler.Format: ExpressibleByArgument {}
