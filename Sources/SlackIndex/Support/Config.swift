import Foundation

/// Settings read from `$XDG_CONFIG_HOME/slackindex/config.json` (else `~/.config/slackindex/config.json`).
///
/// ```json
/// {"me": "ann.lee"}
/// ```
/// `me` is who `from:me` / `to:me` mean. Flags and environment variables win over the file.
public struct Config: Sendable, Decodable, Equatable {
    /// The user `me` stands for: a handle, name or id.
    public var me: String?

    public init(me: String? = nil) {
        self.me = me
    }

    /// Where the config file is for this environment.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return xdg + "/slackindex/config.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/slackindex/config.json"
    }

    /// Reads the config file; an absent file is an empty config.
    ///
    /// - Throws: `ConfigError.malformed` naming the file when it is not a JSON object of known keys.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Config {
        let path = path(environment: environment)
        guard let data = FileManager.default.contents(atPath: path) else { return Config() }
        do {
            return try JSONDecoder().decode(Config.self, from: data)
        } catch {
            throw ConfigError.malformed(path: path)
        }
    }
}

/// A config file problem; `description` is what the user sees.
public enum ConfigError: Error, CustomStringConvertible, Sendable {
    case malformed(path: String)

    public var description: String {
        switch self {
        case .malformed(let path):
            "Could not read \(path): it must be a JSON object such as {\"me\": \"your.handle\"}. Fix or remove it."
        }
    }
}
