/// A WHIP output's published connection: a ``WebRTCPeer`` fed with what the graph made for it
/// (H.264 Constrained Baseline, the push's own or an encode of it; Opus from ``OpusStage``:
/// WebRTC carries no AAC), and the WHIP session resource, deleted when the stream ends. It
/// sends what it is given: nothing is encoded here.
///
/// WebRTC paces and retransmits in GStreamer's threads, so sending never waits: the peer's
/// source queues are bounded and drop their oldest. What the peer reports (receiver reports,
/// PLI/FIR) is read at the service turns: a rating of the link (``NetworkQuality``) and keyframe
/// requests, both handed up to the output.
final class WHIPConnection: OutputConnection {
    /// One frame for the peer.
    struct Frame {
        /// The video layer (simulcast: the packet's variant), nil for sound.
        var layer: Int?
        var data: [UInt8]
        var pts: Int64
        var duration: Int64
        var keyframe: Bool
    }

    let peer: WebRTCPeer
    private let client: WHIPClient
    /// ICE restarts by PATCH when the path is lost (RFC 9725 §4.4); it holds the session.
    private let restarts: WHIPICERestarts
    private(set) var bytesSent: Int64 = 0
    private var rater = NetworkQualityRater()
    /// The push's clock: the statistics' turns and how long the peer has sent no report.
    private let clock: any MonotonicClock
    private let started: Int64
    private var lastStatistics: Int64 = 0
    /// How often the peer's statistics are read and rated.
    private static let statisticsInterval = MediaTime.seconds(1)
    /// What the service turns found for the output to act on.
    private(set) var link = WebRTCLinkStats()

    /// `offer`: ours, whose first media section an ICE restart's PATCH repeats.
    init(peer: WebRTCPeer, layers: Int, client: WHIPClient, session: WHIPSession, offer: String, clock: any MonotonicClock) {
        self.peer = peer
        self.layers = layers
        self.client = client
        restarts = WHIPICERestarts(peer: peer, client: client, session: session, offer: offer, clock: clock)
        self.clock = clock
        started = clock.now().microseconds
    }

    /// How many video layers the peer was made with (simulcast: one per variant).
    private let layers: Int

    func header(at time: Int64) -> [[Frame]] { [] }
    /// A variant beyond the peer's layers (none: the ladder is bounded before the offer) is not sent.
    func carries(_ packet: MediaPacket) -> Bool { packet.kind != .video || Int(packet.variant) < layers }
    func trailer(at time: Int64) -> [[Frame]] { [] }

    func message(for packet: MediaPacket) -> [Frame] {
        guard !packet.isSequenceHeader else { return [] }
        switch packet.kind {
        case .video, .audio:
            // Sound is one Opus packet (``OpusStage``); every Opus packet stands alone.
            let isVideo = packet.kind == .video
            return [Frame(layer: isVideo ? Int(packet.variant) : nil, data: packet.data, pts: packet.pts, duration: packet.duration,
                          keyframe: isVideo ? packet.isKeyframe : true)]
        case .data, .cue:
            return []  // WHIP has no place for RTMP's data messages
        }
    }

    func bodyBytes(of message: [Frame]) -> Int { message.reduce(0) { $0 + $1.data.count } }
    func wireBytes(of message: [Frame]) -> Int64 { Int64(bodyBytes(of: message)) }
    func hasRoom(for bytes: Int64) -> Bool { true }

    func send(_ message: [Frame]) throws(LivePushError) {
        for frame in message {
            peer.send(layer: frame.layer, frame.data, pts: frame.pts, duration: frame.duration, keyframe: frame.keyframe)
            bytesSent += Int64(frame.data.count)
        }
    }

    func flush() throws(LivePushError) -> Bool { true }
    var hasUnwrittenBytes: Bool { false }
    var transportBacklog: Int64 { 0 }

    /// Every turn: the connection's state (a failed DTLS ends it; a lost ICE path is
    /// restarted, and ends it only when restarts cannot bring it back). Every second: the
    /// peer's statistics, rated.
    func serviceIncoming() throws(LivePushError) -> UInt32? {
        let seen = try peer.check(iceFailureIsFatal: false)
        link.keyframeRequests += peer.takeKeyframeRequests()
        let now = clock.now().microseconds
        guard now - lastStatistics >= Self.statisticsInterval.microseconds else {
            if let lost = restarts.turn(ice: seen.ice, stats: nil, now: now) { throw lost }
            return nil
        }
        lastStatistics = now
        let stats = peer.statistics()
        if let lost = restarts.turn(ice: seen.ice, stats: stats.map { ($0.highest_sequence_received, $0.packets_sent) }, now: now) {
            throw lost
        }
        link.iceRestarts = restarts.applied
        if let stats, stats.has_report != 0 {
            link.fractionLost = stats.fraction_lost
            link.roundTripSeconds = stats.round_trip_seconds
            link.jitterSeconds = stats.jitter_seconds
            link.packetsLost = stats.packets_lost
            link.packetsSent = Int64(stats.packets_sent)
            link.nacks = Int(stats.nack_count)
            if let quality = rater.report(fractionLost: stats.fraction_lost, roundTrip: stats.round_trip_seconds,
                                          jitter: stats.jitter_seconds, now: now) {
                link.quality = quality
                link.qualityChanged = true
            }
        } else if let quality = rater.noReport(now: now, since: started) {
            link.quality = quality
            link.qualityChanged = true
        }
        return nil
    }

    /// The link's figures; a change of quality is reported once.
    func takeLinkReport() -> LinkReport? {
        defer {
            link.qualityChanged = false
            link.keyframeRequests = 0
        }
        return .webRTC(link)
    }

    func waitUntilWritable(timeout: Duration) {}

    /// Ends the WHIP session (DELETE, as RFC 9725 asks) and the peer (once a running ICE
    /// restart has ended).
    func close(graceful: Bool) {
        _ = try? client.delete(restarts.session)
        restarts.closePeer()
    }
}

/// A WHIP output's link as the peer reports it (``OutputStats/webrtc``).
public struct WebRTCLinkStats: Sendable, Equatable {
    /// The rated quality, nil before the first report.
    public var quality: NetworkQuality?
    /// Share of packets lost, 0 to 1, from the last report.
    public var fractionLost = 0.0
    /// Round-trip time, seconds.
    public var roundTripSeconds = 0.0
    /// Interarrival jitter, seconds.
    public var jitterSeconds = 0.0
    /// Packets the peer reported lost.
    public var packetsLost: Int64 = 0
    /// RTP packets sent.
    public var packetsSent: Int64 = 0
    /// NACKs received.
    public var nacks = 0
    /// ICE restarts the endpoint accepted (RFC 9725 §4.4): each one a path lost and found
    /// again without a new session.
    public var iceRestarts = 0
    /// Keyframe requests (PLI, FIR) since the last reading.
    var keyframeRequests = 0
    var qualityChanged = false

    /// Creates empty figures.
    public init() {}
}
