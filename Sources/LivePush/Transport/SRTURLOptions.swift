/// The options of an `srt://` output URL, named and measured as FFmpeg's srt protocol names
/// them, so that a URL that works with `ffmpeg -f mpegts srt://…` works here:
/// `srt://host:port?mode=caller&latency=200000&passphrase=…&pbkeylen=16&streamid=…`.
///
/// Times are in microseconds (FFmpeg's `latency`, `rcvlatency`, `peerlatency`), except
/// `connect_timeout`, which FFmpeg takes in milliseconds. Unknown parameters are refused
/// (`invalidURL`): a misspelt `passphrase` must not silently send in the clear.
public struct SRTURLOptions: Sendable, Equatable {
    /// Who connects to whom.
    public enum Mode: String, Sendable {
        /// Connects to a listener (the default).
        case caller
        /// Waits for a caller on the URL's port (the host, if any, is the address to bind).
        case listener
        /// Both sides connect to each other from the same port.
        case rendezvous
    }

    /// `mode`: caller (the default), listener or rendezvous.
    public var mode: Mode = .caller
    /// The receiver's buffering delay, µs (SRT's default is 120 ms).
    public var latency: Int64?
    /// `rcvlatency`, microseconds.
    public var receiveLatency: Int64?
    /// `peerlatency`, microseconds.
    public var peerLatency: Int64?
    /// AES encryption: 10 to 79 characters; both sides must have the same.
    public var passphrase: String?
    /// The key length in bytes: 16, 24 or 32 (AES-128, -192, -256).
    public var keyLength: Int?
    /// What the listener is told of the stream (`#!::r=live/feed,m=publish`, or a plain name).
    public var streamID: String?
    /// The most a caller waits for the handshake, ms.
    public var connectTimeout: Int?
    /// The largest payload per UDP packet: 1316 bytes (seven TS packets) unless said otherwise.
    public var payloadSize: Int = 1316
    /// The most bandwidth the connection may use, bytes/s (0: relative to the input, SRT's default).
    public var maxBandwidth: Int64?

    /// Creates the default options.
    public init() {}

    /// Parses an srt:// URL's query; an unknown option throws `invalidURL`.
    public init(query: String) throws(LivePushError) {
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).lowercased()
            let value = parts.count > 1 ? Self.percentDecoded(parts[1]) : ""
            func invalid(_ why: String) -> LivePushError {
                LivePushError(.invalidURL, "srt:// option \(name): \(why)")
            }
            func number(_ range: ClosedRange<Int64>) throws(LivePushError) -> Int64 {
                guard let n = Int64(value), range.contains(n) else { throw invalid("\(value.isEmpty ? "no value" : "not a number in \(range)")") }
                return n
            }
            switch name {
            case "mode":
                guard let mode = Mode(rawValue: value.lowercased()) else { throw invalid("caller, listener or rendezvous") }
                self.mode = mode
            case "latency": latency = try number(0...60_000_000)
            case "rcvlatency": receiveLatency = try number(0...60_000_000)
            case "peerlatency": peerLatency = try number(0...60_000_000)
            case "passphrase":
                guard (10...79).contains(value.count) else { throw invalid("10 to 79 characters") }
                passphrase = value
            case "pbkeylen":
                let n = try number(0...32)
                guard [0, 16, 24, 32].contains(n) else { throw invalid("16, 24 or 32") }
                keyLength = Int(n)
            case "streamid":
                guard value.utf8.count <= 512 else { throw invalid("512 bytes at most") }
                streamID = value
            case "connect_timeout": connectTimeout = Int(try number(1...600_000))
            case "payload_size", "pkt_size":
                let n = try number(188...1456)
                guard n % 188 == 0 else { throw invalid("a multiple of 188 (TS packets)") }
                payloadSize = Int(n)
            case "maxbw": maxBandwidth = try number(0...Int64(Int32.max))
            case "transtype":
                guard value.lowercased() == "live" else { throw invalid("only live is supported") }
            default:
                throw LivePushError(.invalidURL, "unknown srt:// option \(name)")
            }
        }
    }

    /// `%XX` escapes decoded (a passphrase or stream id may carry `&`, `=` or `#`).
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
