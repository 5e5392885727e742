import Foundation

/// A string that real exports sometimes write as a number (`"created": "1433558319"` vs `1433558319`).
struct LenientString: Decodable, Sendable {
    var value: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            value = string
        } else if let int = try? container.decode(Int64.self) {
            value = String(int)
        } else if let double = try? container.decode(Double.self) {
            value = String(double)
        } else {
            value = nil
        }
    }
}

/// An integer that real exports sometimes write as a string or a float.
struct LenientInt: Decodable, Sendable {
    var value: Int64?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let int = try? container.decode(Int64.self) {
            value = int
        } else if let string = try? container.decode(String.self) {
            value = Int64(string) ?? Double(string).flatMap { Int64(exactly: $0.rounded(.towardZero)) }
        } else if let double = try? container.decode(Double.self) {
            value = Int64(exactly: double.rounded(.towardZero))
        } else if let bool = try? container.decode(Bool.self) {
            value = bool ? 1 : 0
        } else {
            value = nil
        }
    }
}

/// A bool that may come as `true`, `1` or `"true"`.
struct LenientBool: Decodable, Sendable {
    var value: Bool?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            value = bool
        } else if let int = try? container.decode(Int64.self) {
            value = int != 0
        } else if let string = try? container.decode(String.self) {
            value = ["true", "1", "yes"].contains(string.lowercased())
        } else {
            value = nil
        }
    }
}

/// Decodes an element of an array without failing the whole array: a bad element becomes `nil`.
struct Lossy<Wrapped: Decodable>: Decodable {
    var value: Wrapped?

    init(from decoder: any Decoder) throws {
        value = try? Wrapped(decoder: decoder)
    }
}

extension Decodable {
    fileprivate init(decoder: any Decoder) throws { try self.init(from: decoder) }
}

extension KeyedDecodingContainer {
    /// The string at `key` whether written as a string or a number; nil when absent, null or of another type.
    ///
    /// The typed call is tried first: it is the decoder's fast path (the lenient wrapper costs a nested decoder).
    func lenientString(_ key: Key) -> String? {
        if let value = try? decodeIfPresent(String.self, forKey: key) { return value }
        return (try? decodeIfPresent(LenientString.self, forKey: key))?.flatMap { $0.value }
    }

    /// The integer at `key` whether written as a number or a string; nil when absent or unreadable.
    func lenientInt(_ key: Key) -> Int64? {
        if let value = try? decodeIfPresent(Int64.self, forKey: key) { return value }
        return (try? decodeIfPresent(LenientInt.self, forKey: key))?.flatMap { $0.value }
    }

    /// The bool at `key`; nil when absent or unreadable.
    func lenientBool(_ key: Key) -> Bool? {
        if let value = try? decodeIfPresent(Bool.self, forKey: key) { return value }
        return (try? decodeIfPresent(LenientBool.self, forKey: key))?.flatMap { $0.value }
    }

    /// An array of strings (numbers read as strings, other elements dropped); empty when absent.
    func stringArray(_ key: Key) -> [String] {
        if let value = try? decodeIfPresent([String].self, forKey: key) { return value }
        return lossyArray(LenientString.self, key).compactMap(\.value)
    }

    /// The array at `key` with unreadable elements dropped; empty when absent or not an array.
    func lossyArray<T: Decodable>(_ type: T.Type, _ key: Key) -> [T] {
        guard let items = try? decodeIfPresent([Lossy<T>].self, forKey: key) else { return [] }
        return items.compactMap(\.value)
    }
}
