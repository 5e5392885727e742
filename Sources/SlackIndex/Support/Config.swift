import Foundation

/// Settings read from `$XDG_CONFIG_HOME/slackindex/config.json` (else `~/.config/slackindex/config.json`).
///
/// ```json
/// {"me": "ann.lee", "token": "xoxp-…", "api": "https://slack.com/api/", "remote": "https://slack.com/api/"}
/// ```
/// `me` is who `from:me` / `to:me` mean; `token` is the Slack token `sync` and remote search use (the file must then
/// be readable by its owner only); `api` is where `sync` reads from and `remote` where `search` also searches.
/// Flags and environment variables win over the file.
package struct Config: Sendable, Decodable, Equatable {
    /// The user `me` stands for: a handle, name or id.
    package var me: String?
    /// A Slack token (`xoxp-…`, `xoxb-…`, or one made by `slackindex token create`).
    package var token: String?
    /// The Web API base URL `sync` reads from.
    package var api: String?
    /// The Web API base URL whose `search.messages` `search` merges with local results.
    package var remote: String?
    /// The token for `remote` when it is not Slack (e.g. another archive's `serve`).
    package var remoteToken: String?

    private enum CodingKeys: String, CodingKey {
        case me, token, api, remote
        case remoteToken = "remote_token"
    }

    package init(
        me: String? = nil, token: String? = nil, api: String? = nil, remote: String? = nil, remoteToken: String? = nil
    ) {
        self.me = me
        self.token = token
        self.api = api
        self.remote = remote
        self.remoteToken = remoteToken
    }

    /// Where the config file is for this environment.
    package static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return xdg + "/slackindex/config.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/slackindex/config.json"
    }

    /// Reads the config file; an absent file is an empty config.
    ///
    /// - Throws: `ConfigError.malformed` naming the file when it is not a JSON object of known keys;
    ///   `ConfigError.tokenReadableByOthers` when it holds a token and group or others may read it.
    package static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Config {
        let path = path(environment: environment)
        guard let data = FileManager.default.contents(atPath: path) else { return Config() }
        let config: Config
        do {
            config = try JSONDecoder().decode(Config.self, from: data)
        } catch {
            throw ConfigError.malformed(path: path)
        }
        if config.token != nil || config.remoteToken != nil {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
            if mode & 0o077 != 0 { throw ConfigError.tokenReadableByOthers(path: path, mode: mode) }
        }
        return config
    }

    /// The Slack token in force: `SLACK_TOKEN`, else the config file's `token`.
    ///
    /// - Throws: `ConfigError.noToken` when neither is set, or what ``load(environment:)`` throws.
    package static func token(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let token = environment["SLACK_TOKEN"], !token.isEmpty { return token }
        if let token = try load(environment: environment).token, !token.isEmpty { return token }
        throw ConfigError.noToken(path: path(environment: environment))
    }

    /// The token for a remote search service: `SLACKINDEX_REMOTE_TOKEN`, else the config file's `remote_token`;
    /// for Slack itself (`*.slack.com`) also the sync token. Your Slack token is never sent to another service.
    ///
    /// - Throws: `ConfigError.noRemoteToken` when none applies, or what ``load(environment:)`` throws.
    package static func remoteToken(
        for url: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        if let token = environment["SLACKINDEX_REMOTE_TOKEN"], !token.isEmpty { return token }
        if let token = try load(environment: environment).remoteToken, !token.isEmpty { return token }
        let host = URL(string: url)?.host?.lowercased() ?? ""
        if host == "slack.com" || host.hasSuffix(".slack.com") { return try token(environment: environment) }
        throw ConfigError.noRemoteToken(url: url, path: path(environment: environment))
    }
}

/// A config file problem; `description` is what the user sees.
package enum ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    case malformed(path: String)
    case tokenReadableByOthers(path: String, mode: Int)
    case noToken(path: String)
    case noRemoteToken(url: String, path: String)

    package var description: String {
        switch self {
        case .malformed(let path):
            "Could not read \(path): it must be a JSON object such as {\"me\": \"your.handle\"}. Fix or remove it."
        case .tokenReadableByOthers(let path, let mode):
            "\(path) holds a token but its mode is \(String(mode, radix: 8)): others can read it. "
                + "Run 'chmod 600 \(path)', or pass the token in SLACK_TOKEN instead."
        case .noToken(let path):
            "No Slack token: set SLACK_TOKEN, or put {\"token\": \"xoxp-…\"} in \(path) (chmod 600)."
        case .noRemoteToken(let url, let path):
            "No token for the remote \(url): set SLACKINDEX_REMOTE_TOKEN (for another archive, one made there with "
                + "'slackindex token create'), or put {\"remote_token\": \"…\"} in \(path) (chmod 600). "
                + "Your Slack token is only ever sent to slack.com."
        }
    }
}
