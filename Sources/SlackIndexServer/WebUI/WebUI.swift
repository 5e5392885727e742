import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import SlackIndex
import Synchronization

/// The web UI of `slackindex serve`: a page, a style sheet and a script (all in the binary) over the API at
/// `/api/`, and the sign-in that gives a browser a session cookie.
///
/// A session stands for a token: the API answers a request carrying the cookie exactly as it would answer the
/// token (same verification, access rules and rate limit), so the UI cannot show what the token could not read.
/// A session made with a token reads that token back on every request (revoking it signs the browser out); the
/// archive owner's session (`oneTimeSignInPath`, for `serve --open`) carries an admin token record. Sessions live in
/// the archive (`ArchiveSessions`): every `serve` over it answers them, and a restart signs no one out; over an
/// archive opened read-only they live in this process (`MemorySessions`).
///
/// Sign-ins are rate-limited per token and per client address; each token holds at most
/// `Limits.sessionsPerToken` sessions (its next sign-in ends its own oldest, never another token's or the owner's);
/// sessions end after `Limits.sessionIdle` unused and `Limits.sessionLifetime` after sign-in (see `SessionTable`).
public final class WebUI: Sendable {
    /// How sessions and sign-ins are limited.
    public struct Limits: Sendable {
        /// Sessions one token may hold at once (the owner's one-time links count as one token); its next sign-in
        /// ends its own oldest session.
        public var sessionsPerToken = 8
        /// A session unused for this long ends.
        public var sessionIdle: Duration = .seconds(12 * 3600)
        /// A session ends this long after its sign-in, used or not.
        public var sessionLifetime: Duration = .seconds(7 * 86_400)
        /// Sign-ins with one token (`POST /ui/signin`).
        public var signInsPerToken = RateLimit(requests: 10, interval: .seconds(60))
        /// Sign-in attempts from one client address, with a right token or a wrong one.
        public var signInsPerAddress = RateLimit(requests: 30, interval: .seconds(60))
        /// How long a one-time sign-in link works.
        public var codeLifetime: Duration = .seconds(600)

        public init() {}
    }

    /// The cookie's name.
    static let cookieName = "slackindex_session"
    /// The holder the owner's sessions count against (`SessionTable`); no token is this string.
    static let ownerHolder = "owner (serve --open)"

    /// What a session stands for: a token (as presented, with its record), or the owner's admin record.
    enum Session: Sendable {
        case token(String, record: APIToken)
        case owner(APIToken)
    }

    let limits: Limits
    /// Wall time (sessions are shared by the servers over one archive; injected by tests, so that expiry takes no
    /// waiting).
    private let now: @Sendable () -> Duration
    /// In memory until `addRoutes` gives the archive (`SessionStore`).
    private let sessions: Mutex<any SessionStore>
    private let codes = Mutex<[String: (token: APIToken, expires: Duration)]>([:])
    let signInsByToken: RateLimiter
    let signInsByAddress: RateLimiter

    /// - Parameter now: the clock of session expiry and sign-in limits; nil reads the wall clock (time since 1970).
    public init(limits: Limits = Limits(), now: (@Sendable () -> Duration)? = nil) {
        let now = now ?? { .nanoseconds(Int64(Date().timeIntervalSince1970 * 1e9)) }
        self.limits = limits
        self.now = now
        sessions = Mutex(MemorySessions(limits: limits))
        signInsByToken = RateLimiter(limit: limits.signInsPerToken, now: now)
        signInsByAddress = RateLimiter(limit: limits.signInsPerAddress, now: now)
    }

    /// A path (`/ui/signin?code=…`) that signs one browser in once as the archive's owner: an admin session.
    /// Each call makes a new code (`serve --open` makes one at start and one for each SIGUSR1).
    ///
    /// - Parameter userID: the user `from:me` means in that session (may be empty: then it matches no one).
    public func oneTimeSignInPath(userID: String = "") -> String {
        let code = WebUI.randomID()
        let token = APIToken(id: 0, userID: userID, isAdmin: true, created: Int64(Date().timeIntervalSince1970),
            label: "owner (serve --open)")
        let time = now()
        codes.withLock { codes in
            codes = codes.filter { $0.value.expires > time }
            codes[code] = (token, time + limits.codeLifetime)
        }
        return "/ui/signin?code=" + code
    }

    /// Keeps the sessions in `api`'s archive from now on, unless it was opened read-only.
    func keepSessions(for api: SlackAPI) {
        guard api.access == .readWrite else { return }
        sessions.withLock { $0 = ArchiveSessions(archive: api.archive, limits: limits) }
    }

    /// The caller a request's cookie names, if it names a live session (which counts as a use of it); nil also
    /// when the archive cannot be read.
    func caller(cookieHeader: String?) async -> APICaller? {
        guard let id = WebUI.cookie(WebUI.cookieName, in: cookieHeader) else { return nil }
        let (store, time) = (sessions.withLock { $0 }, now())
        return try? await NIOThreadPool.singleton.runIfActive { try store.caller(id, at: time) } ?? nil
    }

    /// Starts a session and returns its id; past `Limits.sessionsPerToken`, the same token's oldest session ends.
    ///
    /// - Throws: the archive's error when it cannot keep it (`StoreError.primaryUnavailable`).
    func startSession(_ session: Session) async throws -> String {
        let id = WebUI.randomID()
        let (store, time) = (sessions.withLock { $0 }, now())
        try await NIOThreadPool.singleton.runIfActive { try store.start(id, session, at: time) }
        return id
    }

    /// Ends the session a cookie names.
    ///
    /// - Throws: the archive's error when it cannot end it.
    func endSession(cookieHeader: String?) async throws {
        guard let id = WebUI.cookie(WebUI.cookieName, in: cookieHeader) else { return }
        let store = sessions.withLock { $0 }
        try await NIOThreadPool.singleton.runIfActive { try store.end(id) }
    }

    /// Takes a one-time code: its token record, once, before it expires.
    func redeem(code: String) -> APIToken? {
        let time = now()
        return codes.withLock { codes in
            guard let entry = codes.removeValue(forKey: code), entry.expires > time else { return nil }
            return entry.token
        }
    }

    /// 43 base62 characters (≈256 bits) from the system's generator.
    static func randomID() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        var generator = SystemRandomNumberGenerator()
        return String((0..<43).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// The value of cookie `name` in a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name, !parts[1].isEmpty { return parts[1] }
        }
        return nil
    }
}
