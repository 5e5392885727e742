import Foundation

/// Small JSON helpers for values the store keeps as JSON text.
enum JSONDecoderCache {
    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
