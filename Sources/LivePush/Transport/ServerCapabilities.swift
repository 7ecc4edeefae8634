import LivePushWire

/// What an RTMP server said it takes when an output connected: Enhanced RTMP's connect answer
/// (`fourCcList`, `videoFourCcInfoMap`, `audioFourCcInfoMap`, `capsEx`), read bounded
/// (`EnhancedRTMPCapabilities` in LivePushWire). A legacy server, and many that take E-RTMP v1 anyway
/// (FFmpeg's listener), say nothing: everything is empty then.
public struct ServerCapabilities: Sendable, Equatable, CustomStringConvertible {
    /// Video FourCCs the server confirmed (`avc1`, `hvc1`, `av01`, `vp09`, or `*`), sorted.
    public var videoFourCCs: [String]
    /// Audio FourCCs the server confirmed (`mp4a`, `Opus`, ...), sorted.
    public var audioFourCCs: [String]
    /// The server's `capsEx`, when it sent one.
    public var capsEx: UInt32?

    /// It takes multitrack video (E-RTMP v2 `capsEx` 0x02): a ladder on one connection.
    public var acceptsMultitrack: Bool { (capsEx ?? 0) & EnhancedRTMPCapabilities.CapsEx.multitrack != 0 }
    /// It may ask the client to reconnect (E-RTMP v2 `capsEx` 0x01).
    public var acceptsReconnectRequest: Bool { (capsEx ?? 0) & EnhancedRTMPCapabilities.CapsEx.reconnect != 0 }

    init(_ answer: EnhancedRTMPCapabilities?) {
        var video = Set(answer?.fourCcList ?? [])
        for (fourCC, bits) in answer?.videoFourCcInfoMap ?? [:] where bits != 0 { video.insert(fourCC) }
        videoFourCCs = video.sorted()
        audioFourCCs = (answer?.audioFourCcInfoMap ?? [:]).filter { $0.value != 0 }.keys.sorted()
        capsEx = answer?.capsEx
    }

    public var description: String {
        let video = videoFourCCs.isEmpty ? "none" : videoFourCCs.joined(separator: ",")
        let audio = audioFourCCs.isEmpty ? "none" : audioFourCCs.joined(separator: ",")
        return "video \(video), audio \(audio), capsEx \(capsEx.map { String($0) } ?? "none")"
            + (acceptsMultitrack ? " (multitrack)" : "") + (acceptsReconnectRequest ? " (reconnect)" : "")
    }
}
