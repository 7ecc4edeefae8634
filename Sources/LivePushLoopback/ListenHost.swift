#if canImport(Glibc)
import Glibc
#endif

/// What a listen address exposes: the receiver answers anyone who reaches it, so an address
/// beyond this machine deserves a warning (and a ``PublishKey``).
public enum ListenHost {
    /// True for `localhost`, 127.0.0.0/8 and `::1` (also written `[::1]`, or as the IPv4-mapped
    /// `::ffff:127.x.y.z`): addresses only this machine reaches. Anything else, `0.0.0.0` and
    /// `::` included, is not.
    public static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }  // ::1
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return mapped && bytes[12] == 127
    }
}
