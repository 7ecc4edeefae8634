/// Connecting a WHIP output (RFC 9725): a WebRTC peer offers (ICE candidates gathered first:
/// no trickle), the offer is POSTed with the bearer token, the answer is taken, and the output
/// publishes once ICE and DTLS are up. Blocking, on a connection worker, like an RTMP connect.
extension PushOutput {
    /// How long the offer waits for ICE candidates (libnice never finishes gathering when a
    /// STUN server does not answer).
    static let iceGatheringTimeout: Duration = .seconds(3)

    /// `info` is what the graph gives this output (``GraphPlan``): H.264 a Constrained Baseline
    /// decoder takes, and Opus.
    func connectWHIP(_ url: PushURL, _ info: StreamInfo) throws(LivePushError) -> WHIPConnection {
        if let video = info.video, video.codec != .h264 {
            throw LivePushError(.outputSettingsInvalid, "a WHIP output carries H.264, not \(video.codec.rawValue)")
        }
        let servers = state.withLock { $0.whipICEServers }
        let peer = try WebRTCPeer(decoderConfiguration: info.video?.decoderConfiguration,
                                  audioChannels: info.audio.map { min(2, max(1, $0.channels)) } ?? 0,
                                  stunServer: Self.firstURI(of: servers, scheme: "stun"),
                                  turnServer: Self.firstURI(of: servers, scheme: "turn"))
        let offer = try peer.makeOffer(gatherTimeout: Self.iceGatheringTimeout)
        let client = WHIPClient(endpoint: url, token: state.withLock { $0.whipToken }, tls: config.tls, timeout: config.connectTimeout)
        let session = try client.publish(offer: offer)
        let iceServers = session.iceServers
        state.withLock { $0.whipICEServers = iceServers }
        do {
            try peer.accept(answer: session.answer)
            try peer.awaitConnected(timeout: config.connectTimeout)
        } catch {
            _ = try? client.delete(session)
            peer.close()
            throw error
        }
        return WHIPConnection(peer: peer, client: client, session: session, clock: clock)
    }

    /// webrtcbin's URI of the first server of `scheme` (`stun`, `turn`, or their `s` forms) it can take.
    static func firstURI(of servers: [ICEServer], scheme: String) -> String? {
        servers.lazy.filter { $0.url.lowercased().hasPrefix(scheme) }.compactMap(\.webrtcbinURI).first
    }
}
