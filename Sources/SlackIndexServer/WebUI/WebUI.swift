import Foundation
import Hummingbird
import NIOCore
import SlackIndex
import Synchronization

/// The web UI of `slackindex serve`: a page, a style sheet and a script (all in the binary) over the API at
/// `/api/`, and the sign-in that gives a browser a session cookie.
///
/// A session stands for a token: the API answers a request carrying the cookie exactly as it would answer the
/// token (same verification, access rules and rate limit), so the UI cannot show what the token could not read.
/// A session made with a token re-checks that token on every request (revoking it signs the browser out); the
/// archive owner's session (`oneTimeSignInPath`, for `serve --open`) carries an admin token record kept in memory
/// only. Sessions live in memory: restarting `serve` signs everyone out.
public final class WebUI: Sendable {
    /// The cookie's name.
    static let cookieName = "slackindex_session"
    /// Sessions kept at once; the oldest is dropped past this.
    static let maximumSessions = 1000
    /// How long a one-time sign-in link works.
    static let codeLifetime: Duration = .seconds(600)

    /// What a session stands for.
    enum Session: Sendable {
        case token(String)
        case owner(APIToken)
    }

    private let sessions = Mutex<(byID: [String: Session], order: [String])>(([:], []))
    private let codes = Mutex<[String: (token: APIToken, expires: ContinuousClock.Instant)]>([:])

    public init() {}

    /// A path (`/ui/signin?code=…`) that signs one browser in once as the archive's owner: an admin session.
    ///
    /// - Parameter userID: the user `from:me` means in that session (may be empty: then it matches no one).
    public func oneTimeSignInPath(userID: String = "") -> String {
        let code = WebUI.randomID()
        let token = APIToken(id: 0, userID: userID, isAdmin: true, created: Int64(Date().timeIntervalSince1970),
            label: "owner (serve --open)")
        codes.withLock { $0[code] = (token, ContinuousClock.now + WebUI.codeLifetime) }
        return "/ui/signin?code=" + code
    }

    /// The caller a request's cookie names, if it names a live session.
    func caller(cookieHeader: String?) -> APICaller? {
        guard let id = WebUI.cookie(WebUI.cookieName, in: cookieHeader) else { return nil }
        guard let session = sessions.withLock({ $0.byID[id] }) else { return nil }
        switch session {
        case .token(let token): return .presented(token)
        case .owner(let record): return .record(record, key: "session " + id)
        }
    }

    /// Starts a session and returns its id.
    func startSession(_ session: Session) -> String {
        let id = WebUI.randomID()
        sessions.withLock { state in
            state.byID[id] = session
            state.order.append(id)
            if state.order.count > WebUI.maximumSessions {
                let dropped = state.order.removeFirst()
                state.byID[dropped] = nil
            }
        }
        return id
    }

    /// Ends the session a cookie names.
    func endSession(cookieHeader: String?) {
        guard let id = WebUI.cookie(WebUI.cookieName, in: cookieHeader) else { return }
        sessions.withLock { state in
            state.byID[id] = nil
            state.order.removeAll { $0 == id }
        }
    }

    /// Takes a one-time code: its token record, once, before it expires.
    func redeem(code: String) -> APIToken? {
        codes.withLock { codes in
            guard let entry = codes.removeValue(forKey: code), entry.expires > ContinuousClock.now else { return nil }
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
