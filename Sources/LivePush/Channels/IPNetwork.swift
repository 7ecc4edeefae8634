#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address block (`10.0.0.0/8`, `::1/128`, or one address), as an API-input
/// rule names hosts by. Only literal addresses are compared: a host name is never resolved to
/// decide whether it is allowed (a lookup could take seconds on the request path, and the name
/// could resolve elsewhere by the time the input opens).
public struct IPNetwork: Sendable, Equatable {
    /// The address's bytes (4 or 16), masked to the prefix.
    let bytes: [UInt8]
    /// Leading bits that must match.
    let prefix: Int

    /// `ADDRESS` or `ADDRESS/PREFIX`; nil when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = Self.address(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefix = value
        }
        self.prefix = prefix
        bytes = Self.masked(address, prefix: prefix)
    }

    /// Whether `address` (bytes of an IPv4 or IPv6 address) lies in the block. An IPv4 address
    /// is not in an IPv6 block or the reverse (an IPv4-mapped IPv6 literal is its own family).
    func contains(_ address: [UInt8]) -> Bool {
        address.count == bytes.count && Self.masked(address, prefix: prefix) == bytes
    }

    /// The bytes of a literal IPv4 (dotted quad only) or IPv6 address; nil for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// Whether `address` is a wildcard (`0.0.0.0`, `::`): bound, it listens on every interface.
    static func isWildcard(_ address: [UInt8]) -> Bool { address.allSatisfy { $0 == 0 } }

    /// Whether `address` is a multicast group (224.0.0.0/4, ff00::/8).
    static func isMulticast(_ address: [UInt8]) -> Bool {
        address.count == 4 ? address[0] & 0xF0 == 0xE0 : address.first == 0xFF
    }

    private static func masked(_ address: [UInt8], prefix: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let kept = min(8, max(0, prefix - index * 8))
            return kept == 8 ? byte : byte & ~(0xFF >> UInt8(kept))
        }
    }
}
