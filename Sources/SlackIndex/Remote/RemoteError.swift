/// A problem talking to a Slack-compatible Web API; `description` is what the user sees. Never holds the token.
public enum RemoteError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The base URL is not an http(s) URL.
    case badURL(String)
    /// Plain http to another machine with a Slack token.
    case insecure(String)
    /// The API answered `{"ok": false, "error": …}`.
    case api(method: String, error: String)
    /// HTTP 429 with a `Retry-After` longer than the caller is willing to wait.
    case rateLimited(method: String, retryAfter: Int)
    /// Still failing (HTTP 5xx, dropped connections, garbage) after every retry.
    case unavailable(method: String, attempts: Int, last: String)
    /// An HTTP status that retrying cannot fix (4xx other than 429).
    case http(method: String, status: Int)
    /// No connection could be made (refused, a name that does not resolve), for a caller that does not retry
    /// (``SlackWebClient/Policy/retriesConnections``).
    case unreachable(url: String, reason: String)

    public var description: String {
        switch self {
        case .insecure(let url):
            "Refusing to send a Slack token over plain http to \(url): use https, or a loopback address."
        case .badURL(let url):
            "'\(url)' is not an http(s) URL of a Slack-compatible Web API; use e.g. https://slack.com/api/."
        case .api(let method, let error):
            switch error {
            case "not_authed", "invalid_auth", "token_revoked", "account_inactive":
                "\(method) answered '\(error)': the token was refused. Check SLACK_TOKEN or the config file's token."
            case "missing_scope":
                "\(method) answered 'missing_scope': the token lacks a scope this method needs."
            default:
                "\(method) answered '\(error)'."
            }
        case .rateLimited(let method, let seconds):
            "\(method) is rate-limited: the server asked to wait \(seconds) s. Try again later."
        case .unavailable(let method, let attempts, let last):
            "\(method) failed \(attempts) times (last: \(last)). Check the URL and the network, then run again; "
                + "work done so far is kept."
        case .http(let method, let status):
            "\(method) answered HTTP \(status)."
        case .unreachable(let url, let reason):
            "\(url) cannot be reached (\(reason)). Check the URL and that its server is running."
        }
    }
}
