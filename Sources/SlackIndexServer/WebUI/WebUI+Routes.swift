import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import SlackIndex

/// A file the UI serves from the binary, with its gzipped form made once.
struct WebAsset: Sendable {
    let contentType: String
    let plain: ByteBuffer
    let gzipped: ByteBuffer?

    init(_ text: String, type: String) {
        contentType = type
        let bytes = Array(text.utf8)
        plain = ByteBuffer(bytes: bytes)
        gzipped = bytes.count >= Gzip.minimumBytes ? Gzip.compress(bytes, level: 9).map { ByteBuffer(bytes: $0) } : nil
    }

    static let script = WebAsset(WebAssets.script, type: "text/javascript; charset=utf-8")
    static let styles = WebAsset(WebAssets.styles, type: "text/css; charset=utf-8")
    static let page = WebAsset(WebAsset.versioned(WebAssets.page), type: "text/html; charset=utf-8")
    static let emoji = WebAsset(standardEmojiTable, type: "text/plain; charset=utf-8")

    /// The version of the script, styles and emoji table: 16 hex digits of FNV-1a over their bytes. Pages ask for
    /// them as `…?v=VERSION`, which a browser may keep for a year (`immutable`): a new binary's assets have new
    /// URLs. A hash for naming, not for security.
    static let version: String = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for text in [WebAssets.script, WebAssets.styles, standardEmojiTable] {
            for byte in text.utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    /// `page` with `{{v}}` replaced by the assets' version.
    static func versioned(_ page: String) -> String {
        page.replacingOccurrences(of: "{{v}}", with: version)
    }
}

extension WebUI {
    /// The policy of every UI answer: only this server's own script, styles and API; no inline script or style,
    /// no frames, no other origin.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The headers every UI answer carries.
    static func securityHeaders(type: String) -> HTTPFields {
        var fields: HTTPFields = [
            .contentType: type,
            .contentSecurityPolicy: contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .cacheControl: "no-cache",
            .vary: "Accept-Encoding, Cookie",
        ]
        if let referrer = HTTPField.Name("Referrer-Policy") { fields[referrer] = "no-referrer" }
        return fields
    }

    /// Adds `/`, `/ui/app.js`, `/ui/app.css`, `/ui/emoji.txt`, `/ui/signin` (GET with a one-time code, POST with
    /// a token) and `/ui/signout` to `router`. Sign-in and sign-out refuse requests from other sites
    /// (`isSameOrigin`).
    func addRoutes(to router: Router<ServeRequestContext>, api: SlackAPI) {
        keepSessions(for: api)
        router.get("/") { request, _ in try await self.home(request, api: api) }
        router.get("/ui/app.js") { request, _ in WebUI.serve(.script, for: request) }
        router.get("/ui/app.css") { request, _ in WebUI.serve(.styles, for: request) }
        router.get("/ui/emoji.txt") { request, _ in WebUI.serve(.emoji, for: request) }
        router.get("/ui/signin") { request, _ in
            guard WebUI.isSameOrigin(request) else { return WebUI.crossSiteRefusal(of: "sign-in") }
            return await self.redeem(request)
        }
        router.post("/ui/signin") { request, context in
            guard WebUI.isSameOrigin(request) else { return WebUI.crossSiteRefusal(of: "sign-in") }
            return try await self.signIn(request, from: ClientAddress.key(context.remoteAddress), api: api)
        }
        router.post("/ui/signout") { request, _ in
            guard WebUI.isSameOrigin(request) else { return WebUI.crossSiteRefusal(of: "sign-out") }
            do {
                try await self.endSession(cookieHeader: request.headers[.cookie])
            } catch {
                return WebUI.signInPage(error: WebUI.cannotWrite(error, doing: "sign out"), status: .serviceUnavailable)
            }
            return WebUI.redirect(cookie: "\(WebUI.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
        }
    }

    /// True unless a browser says the request comes from another site, or cannot say it does not.
    ///
    /// An `Origin` must be this server's own (`http://` or `https://` and the request's `Host`). Without one, or
    /// with `Origin: null` (what a browser sends for a POST from a page whose referrer policy is `no-referrer`, as
    /// ours is, but also from a sandboxed frame of any site), `Sec-Fetch-Site` decides: `same-origin`, or `none`
    /// (typed, or opened from outside a page, as a link from a terminal is). A request with neither header comes
    /// from no browser (curl, scripts), which no other site can send on anyone's behalf; `Origin: null` without
    /// `Sec-Fetch-Site` is refused.
    static func isSameOrigin(_ request: Request) -> Bool {
        let origin = request.headers[.origin]?.lowercased()
        if let origin, origin != "null" {
            guard let host = request.head.authority?.lowercased(), !host.isEmpty else { return false }
            return origin == "http://" + host || origin == "https://" + host
        }
        if let name = HTTPField.Name("Sec-Fetch-Site"), let site = request.headers[name]?.lowercased() {
            return site == "same-origin" || site == "none"
        }
        return origin == nil
    }

    /// The 403 for a sign-in or sign-out another site's page sent (login CSRF, forced sign-out).
    static func crossSiteRefusal(of action: String) -> Response {
        let text = "Refused: this \(action) came from another site's page. Use the form on this server's own page (/)."
        return Response(
            status: .forbidden, headers: securityHeaders(type: "text/plain; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    /// `/`: the app for a signed-in browser, else the sign-in form.
    private func home(_ request: Request, api: SlackAPI) async throws -> Response {
        let signedIn: Bool
        switch await caller(cookieHeader: request.headers[.cookie]) {
        case .record: signedIn = true
        case .presented(let token):
            signedIn = (try? await NIOThreadPool.singleton.runIfActive { try api.archive.verifyToken(token) }) != nil
        case nil: signedIn = false
        }
        return signedIn ? WebUI.serve(.page, for: request) : WebUI.signInPage(error: nil, status: .ok)
    }

    /// `POST /ui/signin` with `token=…`: a session for a token of the archive. Attempts are limited per client
    /// `address` (right or wrong token) and then per token, before the token is looked up.
    private func signIn(_ request: Request, from address: String, api: SlackAPI) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 10)
        let token = APIParameters.form(String(buffer: body))["token"]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        var wait = await signInsByAddress.acquire(address)
        var limit = ServeMetrics.Limit.signInAddress
        if wait == nil {
            wait = await signInsByToken.acquire(token)
            limit = .signInToken
        }
        if let wait {
            api.configuration.metrics?.rateLimited(limit)
            let seconds = RateLimiter.retryAfter(wait)
            var refused = WebUI.signInPage(
                error: "Too many sign-ins: try again in \(seconds) s.", status: .tooManyRequests)
            refused.headers[.retryAfter] = String(seconds)
            return refused
        }
        let record = try? await NIOThreadPool.singleton.runIfActive { try api.archive.verifyToken(token) }
        guard let record = record ?? nil else {
            return WebUI.signInPage(error: "That is not a token of this archive.", status: .unauthorized)
        }
        return await signedIn(.token(token, record: record))
    }

    /// The redirect that sets a new session's cookie, or the sign-in page with a 503 when the archive cannot keep
    /// the session (its PostgreSQL primary does not answer).
    private func signedIn(_ session: Session) async -> Response {
        do {
            return WebUI.redirect(cookie: WebUI.sessionCookie(try await startSession(session)))
        } catch {
            var refused = WebUI.signInPage(error: WebUI.cannotWrite(error, doing: "sign in"), status: .serviceUnavailable)
            refused.headers[.retryAfter] = "10"
            return refused
        }
    }

    /// Why a sign-in or sign-out could not be kept, for the page: the archive cannot be written now.
    static func cannotWrite(_ error: any Error, doing action: String) -> String {
        if case StoreError.primaryUnavailable = error {
            return "You cannot \(action) right now: the archive's primary database does not answer (reading goes on "
                + "for those signed in). Try again in a minute."
        }
        return "You cannot \(action) right now: the archive could not be written. Try again in a minute."
    }

    /// `GET /ui/signin?code=…`: the owner's one-time link.
    private func redeem(_ request: Request) async -> Response {
        let code = APIParameters.form(request.uri.query ?? "")["code"] ?? ""
        guard let record = redeem(code: code) else {
            return WebUI.signInPage(
                error: "That sign-in link was used already or has expired: get a new one from serve --open "
                    + "(kill -USR1 PID, as it printed), or sign in with a token.",
                status: .unauthorized)
        }
        return await signedIn(.owner(record))
    }

    static func sessionCookie(_ id: String) -> String {
        "\(cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict"
    }

    /// A 303 to `/` that sets `cookie`.
    static func redirect(cookie: String) -> Response {
        var headers = securityHeaders(type: "text/plain; charset=utf-8")
        headers[.location] = "/"
        headers[.setCookie] = cookie
        return Response(status: .seeOther, headers: headers)
    }

    /// The sign-in form, with `error` (a fixed sentence of ours, escaped all the same) under it.
    static func signInPage(error: String?, status: HTTPResponse.Status) -> Response {
        let page = WebAsset.versioned(WebAssets.signIn).replacingOccurrences(
            of: "{{error}}", with: HTMLText.escape(error ?? ""))
        return Response(
            status: status, headers: securityHeaders(type: "text/html; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }

    /// An asset, gzipped when the client accepts it; kept by the browser when asked for under the current
    /// version (`?v=`), else revalidated each time.
    static func serve(_ asset: WebAsset, for request: Request) -> Response {
        var headers = securityHeaders(type: asset.contentType)
        if asset.contentType.hasPrefix("text/html") {
            headers[.cacheControl] = "no-store"
        } else if APIParameters.form(request.uri.query ?? "")["v"] == WebAsset.version {
            headers[.cacheControl] = "public, max-age=31536000, immutable"
        }
        if let gzipped = asset.gzipped, Gzip.accepted(request.headers[.acceptEncoding]) {
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: gzipped))
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.plain))
    }
}

/// Text made safe to put into HTML.
enum HTMLText {
    /// `&`, `<`, `>`, `"` and `'` as character references.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
