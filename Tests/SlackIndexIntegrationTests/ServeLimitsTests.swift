import Foundation
import NIOPosix
import Synchronization
import Testing

@testable import SlackIndexServer
@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// A one-shot gate a blocking thread waits at until a test opens it.
final class Gate: Sendable {
    private let condition = Mutex(false)

    func wait() {
        while !condition.withLock({ $0 }) { usleep(1_000) }
    }

    func open() { condition.withLock { $0 = true } }

    var isOpen: Bool { condition.withLock { $0 } }
}

/// Runs a Python script and waits for it without blocking a thread of the cooperative pool: the server under test
/// runs on that pool too, and two tests blocked in `waitUntilExit()` on a 2-core machine starve it.
func runPython(_ script: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let out = Pipe()
    process.standardOutput = out
    let collected = Mutex(Data())
    out.fileHandleForReading.readabilityHandler = { handle in
        let chunk = handle.availableData
        collected.withLock { $0.append(chunk) }
    }
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in done.resume() }
        do { try process.run() } catch {
            process.terminationHandler = nil
            done.resume(throwing: error)
        }
    }
    out.fileHandleForReading.readabilityHandler = nil
    let rest = out.fileHandleForReading.readDataToEndOfFile()
    let text = collected.withLock { String(decoding: $0 + rest, as: UTF8.self) }
    return (process.terminationStatus, text)
}

/// `serve` under one greedy client: searches are capped per token and run on their own threads, so cheap reads
/// keep answering; idle and trickling connections are closed.
@Suite struct ServeLimitsTests {
    /// The API over `archive` with one search thread (no per-token rate limit), whose searches wait up to 120 s for
    /// it, with `tune`'s changes.
    static func oneSearchThread(_ archive: Archive, _ tune: (inout SlackAPIConfiguration) -> Void) -> SlackAPI {
        var configuration = SlackAPIConfiguration(rateLimit: RateLimit(requests: 1_000_000, interval: .seconds(1)))
        configuration.searchThreads = 1
        configuration.searchWait = .seconds(120)
        tune(&configuration)
        return SlackAPI(archive: archive, configuration: configuration)
    }

    /// Holds `api`'s one search thread until `gate` opens, and starts `token`'s search; returns once that search is
    /// admitted (counted in flight), so that it stays in flight until the gate opens.
    static func holdTheSearchThread(
        _ api: SlackAPI, until gate: Gate, searching parameters: [String: String], as token: String
    ) async throws -> (holder: Task<Void, any Error>, first: Task<SlackAPIResponse, Never>) {
        let holder = Task { try await api.searchPool.runIfActive { gate.wait() } }
        let first = Task { await api.call("search.messages", parameters: parameters, bearer: token) }
        while api.searches.withLock({ $0[token] }) != 1 { try await Task.sleep(for: .milliseconds(5)) }
        return (holder, first)
    }

    @Test func searchesAreCappedPerTokenAndCheapReadsDoNotQueueBehindThem() async throws {
        let archive = try TestSupport.sampleArchive()
        // The other token's search waits for the thread until the gate opens (see the watchdog below).
        let metrics = ServeMetrics()
        let api = Self.oneSearchThread(archive) {
            $0.searchesPerToken = 1
            $0.metrics = metrics
        }
        let greedy = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token
        let other = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token
        // Hold the one search thread, so that every search stays in flight until released.
        let gate = Gate()
        let deep = ["query": "the", "page": "100", "count": "100"]
        let (holder, first) = try await Self.holdTheSearchThread(api, until: gate, searching: deep, as: greedy)
        let refused = await api.call("search.messages", parameters: deep, bearer: greedy)
        #expect(refused.status == 429 && refused.retryAfter == 1 && refused.error == "ratelimited")
        // Another token is admitted; cheap reads answer while both searches wait for the thread.
        let second = Task { await api.call("search.messages", parameters: ["query": "the"], bearer: other) }
        let channel = try APIFixture.conversationID(folder: "general")
        // The history answers while the gate holds both searches: queued behind them, it would wait for the gate
        // for ever. A watchdog opens the gate after 60 s, so such a regression fails below instead of hanging the
        // suite (a bound of 5 s flaked at 7.3 s on a loaded 2-core VM: this is not a speed test).
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            gate.open()
        }
        let history = await api.call("conversations.history", parameters: ["channel": channel], bearer: greedy)
        #expect(history.ok, "\(history.body)")
        #expect(!gate.isOpen, "answered while the searches were held, not after the watchdog let them go")
        watchdog.cancel()
        gate.open()
        try await holder.value
        let answered = await first.value
        #expect(answered.ok, "\(answered.body)")
        #expect(await second.value.ok)
        #expect(api.searches.withLock { $0.isEmpty })
        // `/metrics` counts the refusal under its limit, and the two searches run.
        let text = await metrics.scrape(api: api)
        #expect(sample(text, #"slackindex_ratelimited_total{limit="searches_per_token"}"#) == 1, "\(text)")
        #expect(sample(text, #"slackindex_ratelimited_total{limit="token"}"#) == nil)
        #expect(sample(text, "slackindex_searches_total") == 2 && sample(text, "slackindex_search_wait_seconds_count") == 2)
    }

    /// Issue 51: many clients, each within its own token's rate, search at once: past the search threads they
    /// wait for one in turn instead of being refused (before, past 16 in flight all answered 429); a search that
    /// waits past `searchWait`, or finds `searchQueue` already waiting, answers 503 with `Retry-After`.
    @Test func searchesPastTheThreadsWaitForOneAndPastTheDeadlineAreToldToComeBack() async throws {
        let archive = try TestSupport.sampleArchive()
        let metrics = ServeMetrics()
        let api = Self.oneSearchThread(archive) {
            $0.searchQueue = 24
            $0.metrics = metrics
        }
        let tokens = try (0..<26).map { _ in try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token }
        // The one search thread held: the first search takes the slot and waits for the thread.
        let gate = Gate()
        let (holder, first) = try await Self.holdTheSearchThread(
            api, until: gate, searching: ["query": "the"], as: tokens[0])
        try await Task.sleep(for: .milliseconds(50))
        // 24 more, each from its own token: all wait, none is refused.
        let waiting = (1...24).map { index in
            Task { await api.call("search.messages", parameters: ["query": "deploy"], bearer: tokens[index]) }
        }
        while api.slots.waiting < 24 { try await Task.sleep(for: .milliseconds(5)) }
        // One more finds the queue full: told at once to come back.
        let full = await api.call("search.messages", parameters: ["query": "deploy"], bearer: tokens[25])
        #expect(full.status == 503 && full.retryAfter == 1 && full.error == "service_unavailable", "\(full)")
        // `/metrics` reads the queue at the scrape: 24 waiting, one told to come back, one running.
        let during = await metrics.scrape(api: api)
        #expect(sample(during, "slackindex_searches_waiting") == 24, "\(during)")
        #expect(sample(during, "slackindex_search_unavailable_total") == 1)
        #expect(sample(during, "slackindex_searches_total") == 1)
        gate.open()
        try await holder.value
        #expect(await first.value.ok)
        for task in waiting {
            let answer = await task.value
            #expect(answer.ok && answer.status == 200, "\(answer.body)")
        }
        #expect(api.slots.waiting == 0 && api.searches.withLock { $0.isEmpty })
        let drained = await metrics.scrape(api: api)
        #expect(sample(drained, "slackindex_searches_waiting") == 0 && sample(drained, "slackindex_searches_total") == 25)

        // With a short wait: a search that finds the thread busy past it answers 503, and gives its place up.
        let impatient = Self.oneSearchThread(archive) {
            $0.searchQueue = 24
            $0.searchWait = .milliseconds(200)
        }
        let busy = Gate()
        let (hold, taken) = try await Self.holdTheSearchThread(
            impatient, until: busy, searching: ["query": "the"], as: tokens[0])
        try await Task.sleep(for: .milliseconds(50))
        let late = await impatient.call("search.messages", parameters: ["query": "deploy"], bearer: tokens[1])
        #expect(late.status == 503 && late.retryAfter == 1 && late.error == "service_unavailable", "\(late)")
        #expect(impatient.slots.waiting == 0)
        busy.open()
        try await hold.value
        #expect(await taken.value.ok)
        let after = await impatient.call("search.messages", parameters: ["query": "deploy"], bearer: tokens[1])
        #expect(after.ok, "the slot came back: \(after.body)")
    }

    /// Page 100 of 100 reads and snippets only its own 100 messages, and is the same page as a shallow search
    /// that ranks everything.
    @Test func aDeepPageIsTheSameAsTheTailOfAShallowSearch() throws {
        let archive = try TestSupport.sampleArchive()
        let engine = SearchEngine(archive: archive)
        for sort in [SearchSort.newest, .oldest, .relevance] {
            var all = SearchOptions()
            all.sort = sort
            all.limit = 60
            let whole = try engine.search("the", options: all).hits.map(\.message.rowID)
            var paged = all
            paged.limit = 20
            paged.offset = 40
            let tail = try engine.search("the", options: paged).hits.map(\.message.rowID)
            #expect(whole.count == 60)
            #expect(tail == Array(whole.suffix(20)), "\(sort)")
        }
    }

    /// A connection that opens and sends half a request head is closed after the idle timeout.
    @Test func trickledAndIdleConnectionsAreClosed() async throws {
        let archive = try TestSupport.sampleArchive()
        var configuration = SlackAPIConfiguration()
        configuration.idleTimeout = .seconds(1)
        let server = try await SlackAPIServer.start(archive: archive, configuration: configuration)
        defer { Task { await server.stop() } }
        let script = """
            import socket, sys, time
            port = int(sys.argv[1])
            idle = socket.create_connection(("127.0.0.1", port))
            partial = socket.create_connection(("127.0.0.1", port))
            start = time.time()
            for piece in [b"GET /api/api.te", b"st HTTP/1.1\\r\\nHo"]:
                partial.send(piece)
                time.sleep(0.4)
            for s in (idle, partial):
                s.settimeout(10)
                assert s.recv(100) == b"", "the server answered instead of closing"
            print("%.1f" % (time.time() - start))
            """
        let run = try await runPython(script, [String(server.port)])
        let seconds = Double(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(run.status == 0)
        #expect(seconds >= 0.8 && seconds < 5, "closed after \(seconds) s")
        await server.stop()
    }
}

extension ServeLimitsTests {
    /// With room for one connection, a second client is served at once: the first (idle) one is closed for it.
    @Test func aConnectionPastTheCapClosesTheIdleOne() async throws {
        let archive = try TestSupport.sampleArchive()
        var configuration = SlackAPIConfiguration()
        configuration.maxConnections = 1
        let server = try await SlackAPIServer.start(archive: archive, configuration: configuration)
        defer { Task { await server.stop() } }
        let script = """
            import socket, sys, time
            port = int(sys.argv[1])
            hog = socket.create_connection(("127.0.0.1", port))
            time.sleep(0.2)
            start = time.time()
            client = socket.create_connection(("127.0.0.1", port))
            client.send(b"GET /api/api.test HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
            client.settimeout(10)
            answer = client.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200"), answer
            hog.settimeout(10)
            assert hog.recv(100) == b"", "the idle connection was kept"
            print("%.2f" % (time.time() - start))
            """
        let run = try await runPython(script, [String(server.port)])
        let seconds = Double(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(run.status == 0)
        // Not a speed test (that is the next one): before, the client waited for the idle timeout (15 s).
        #expect(seconds >= 0 && seconds < 5, "answered after \(seconds) s")
        await server.stop()
    }

    /// A Python function for the scripts below: how many of a list of sockets the server has not closed.
    static let stillOpen = """
        def still_open(sockets):
            count = 0
            for s in sockets:
                s.setblocking(False)
                try:
                    count += s.recv(1) != b""
                except BlockingIOError:
                    count += 1
            return count

        """

    /// 300 idle connections from one address (past the 256 in all and the 32 per address) do not hold the server:
    /// a client from that address and one from another are answered within 1 s, and the address keeps at most 32
    /// of them. (Before, new clients waited in the listen backlog for the idle timeout: 12–14 s.)
    ///
    /// `slackindex serve` runs as its own process, with its defaults, so that other tests' work on this process's
    /// event loops does not delay its answers; each client asks three times and its fastest answer counts, so
    /// that a moment of load on this 2-core machine does not either (the code before failed the first time, with
    /// a 10 s time-out).
    @Test func threeHundredIdleConnectionsDoNotHoldTheServer() async throws {
        let server = try ServeCLITests.serve(db: try ServeCLITests.importSample())
        defer { if server.process.isRunning { _ = server.stop() } }
        let port = try #require(URL(string: server.url)?.port)
        let script = """
            import socket, sys, time
            port = int(sys.argv[1])
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
            time.sleep(1)  # the server has accepted them all (connect returns once the kernel has)
            def ask(source):
                start = time.time()
                client = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
                client.send(b"GET /api/api.test HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                client.settimeout(10)
                answer = client.recv(4096)
                assert answer.startswith(b"HTTP/1.1 200"), answer
                return time.time() - start
            same = min(ask("127.0.0.1") for _ in range(3))
            other = min(ask("127.0.0.2") for _ in range(3))
            time.sleep(0.2)
            print("%.3f %.3f %d" % (same, other, still_open(held)))
            """
        let run = try await runPython(Self.stillOpen + script, [String(port)])
        let figures = run.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(run.status == 0 && figures.count == 3, "\(run.stdout)")
        if figures.count == 3 {
            #expect(figures[0] < 1 && figures[1] < 1, "answered after \(figures[0]) s and \(figures[1]) s")
            let perAddress = SlackAPIConfiguration().maxConnectionsPerAddress
            #expect(figures[2] <= Double(perAddress), "\(figures[2]) idle connections kept")
        }
        #expect(server.stop() == 0)
    }

    /// Under pressure (more than half of the connections open), idle ones are closed after `busyIdleTimeout`
    /// (1 s) instead of the idle timeout (15 s), until half are open; without pressure they are kept.
    ///
    /// The client waits until at most `kept` are open (up to 12 s: under a loaded CI run the guard's 1 s checks
    /// came late, 26 of 30 were still open after 3 s), then 3 s more, and counts: too many closed, or none
    /// closed without pressure, still fails.
    @Test(arguments: [(10, 10), (30, 20)])
    func idleConnectionsCloseSoonerUnderPressure(idle: Int, kept: Int) async throws {
        let archive = try TestSupport.sampleArchive()
        var configuration = SlackAPIConfiguration()
        configuration.maxConnections = 40
        configuration.maxConnectionsPerAddress = 40
        let server = try await SlackAPIServer.start(archive: archive, configuration: configuration)
        defer { Task { await server.stop() } }
        let script = """
            import socket, sys, time
            port, count, kept = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
            deadline = time.time() + 12
            while still_open(held) > kept and time.time() < deadline:
                time.sleep(0.25)
            time.sleep(3)
            print(still_open(held))
            """
        let run = try await runPython(Self.stillOpen + script, [String(server.port), String(idle), String(kept)])
        #expect(run.status == 0)
        #expect(Int(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == kept, "\(run.stdout)")
        await server.stop()
    }

    /// A 100 KB GET URL (a long query, a long cursor) gets Slack's JSON, not an empty 400.
    @Test func longURLsGetSlackShapedAnswers() async throws {
        let archive = try TestSupport.sampleArchive()
        let token = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token
        let server = try await SlackAPIServer.start(archive: archive)
        defer { Task { await server.stop() } }
        let channel = try APIFixture.conversationID(folder: "general")
        let script = """
            import json, sys, urllib.request, urllib.error
            base, token, channel = sys.argv[1:4]
            for path in ["search.messages?query=" + "a" * 100000,
                         "conversations.history?channel=" + channel + "&cursor=" + "b" * 100000]:
                request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
                try:
                    # Generous: on a loaded test machine 30 s once timed out (an idle one answers in milliseconds).
                    body = urllib.request.urlopen(request, timeout=120).read()
                except urllib.error.HTTPError as e:
                    body = e.read()
                answer = json.loads(body)
                print(answer["ok"], answer.get("error"))
            """
        let run = try await runPython(script, [server.baseURL, token, channel])
        let lines = run.stdout.split(separator: "\n")
        #expect(run.status == 0)
        #expect(lines == ["True None", "False invalid_cursor"])
        await server.stop()
    }
}

extension ServeLimitsTests {
    /// Connections and sign-ins are counted per IPv6 /64 (one client's usual share), and IPv4 clients of a server
    /// on `::` by their IPv4 address.
    @Test(arguments: [
        ("2001:db8:0:1::5", "2001:db8:0:1::/64"),
        ("2001:0DB8:0000:0001:aaaa:bbbb:cccc:dddd", "2001:db8:0:1::/64"),
        ("2001:db8:0:1:ffff::", "2001:db8:0:1::/64"),
        ("::1", "0:0:0:0::/64"),
        ("::ffff:127.0.0.1", "127.0.0.1"),
        ("1::2::3", nil),
        ("1:2:3", nil),
    ])
    func ipv6AddressesCountByTheirNetwork(text: String, key: String?) {
        #expect(ClientAddress.network64(text) == key)
    }
}
