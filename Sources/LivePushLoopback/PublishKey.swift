import LivePush

/// A shared secret every publish must carry, for a receiver reachable beyond this machine:
/// the stream name ends in `?key=SECRET` (`rtmp://host:1935/live/cam?key=SECRET`), as with
/// nginx-rtmp's `on_publish` checks. A publish without it, or with another key, is refused with
/// `NetStream.Publish.BadAuth`. The query never reaches the recording's name (`cam.flv`), and the
/// secret is never printed: ``description`` masks all but its first four characters.
///
/// A plain secret rather than a signed `auth_key` (``PublishAuthentication``): any RTMP client
/// (ffmpeg, OBS) can send it, with nothing to compute.
public struct PublishKey: Sendable, CustomStringConvertible {
    private let secret: [UInt8]

    /// Characters a key may have: those a URL carries as they are (RFC 3986's unreserved), so
    /// that no client encodes them differently from the way they are compared.
    public static func isValid(_ secret: String) -> Bool {
        !secret.isEmpty && secret.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
        }
    }

    /// A key; nil when `secret` is empty or has a character outside `A-Z a-z 0-9 - . _ ~`.
    public init?(_ secret: String) {
        guard Self.isValid(secret) else { return nil }
        self.secret = Array(secret.utf8)
    }

    /// `abcd****`: enough to tell two keys apart in a log, too little to publish with.
    public var description: String { Redaction.mask(String(decoding: secret, as: UTF8.self)) }

    /// Whether the publish name (with its query) carries this key as `key=`.
    func admits(rawName: String) -> Bool {
        guard let question = rawName.firstIndex(of: "?") else { return false }
        let query = rawName[rawName.index(after: question)...]
        var admitted = false
        for pair in query.split(separator: "&") where pair.hasPrefix("key=") {
            // Every `key=` is compared, each in time independent of where it differs.
            admitted = Self.equalInConstantTime(Array(pair.utf8.dropFirst(4)), secret) || admitted
        }
        return admitted
    }

    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
