/// Connecting a WHIP output (RFC 9725): a WebRTC peer offers, the offer is POSTed at once with
/// the bearer token (trickle ICE: the candidates gathered afterwards follow by PATCH, RFC 8840,
/// as ``WHIPPatchStateMachine`` decides), the answer is taken, and the output publishes once
/// ICE and DTLS are up. Blocking, on a connection worker, like an RTMP connect: every PATCH is
/// sent from here, never from the send loop.
extension PushOutput {
    /// How long gathering may go on while the output connects: candidates found later than
    /// this are not trickled (libnice never finishes gathering when a STUN server does not answer).
    static let iceGatheringTimeout: Duration = .seconds(3)

    /// `info` is what the graph gives this output (``GraphPlan``): H.264 a Constrained Baseline
    /// decoder takes, and Opus.
    func connectWHIP(_ url: PushURL, _ info: StreamInfo) throws(LivePushError) -> WHIPConnection {
        if let video = info.video, video.codec != .h264 {
            throw LivePushError(.outputSettingsInvalid, "a WHIP output carries H.264, not \(video.codec.rawValue)")
        }
        // A ladder is simulcast (RFC 8853): one layer per variant, the top first.
        let layers = info.variants.isEmpty ? (info.video.map { [$0] } ?? []) : info.variants
        if let other = layers.first(where: { $0.codec != .h264 }) {
            throw LivePushError(.outputSettingsInvalid, "a WHIP output carries H.264, not \(other.codec.rawValue)")
        }
        let servers = state.withLock { $0.whipICEServers }
        let peer = try WebRTCPeer(decoderConfigurations: layers.map(\.decoderConfiguration),
                                  audioChannels: info.audio.map { min(2, max(1, $0.channels)) } ?? 0,
                                  stunServer: Self.firstURI(of: servers, scheme: "stun"),
                                  turnServer: Self.firstURI(of: servers, scheme: "turn"), trickle: true)
        let offer = try peer.makeOffer(gatherTimeout: .zero)
        let client = WHIPClient(endpoint: url, token: state.withLock { $0.whipToken }, tls: config.tls, timeout: config.connectTimeout)
        let session = try client.publish(offer: offer)
        let iceServers = session.iceServers
        state.withLock { $0.whipICEServers = iceServers }
        do {
            try peer.accept(answer: session.answer)
            try trickleUntilConnected(peer, client: client, session: session, offer: offer)
        } catch {
            _ = try? client.delete(session)
            peer.close()
            throw error
        }
        return WHIPConnection(peer: peer, layers: max(1, layers.count), client: client, session: session, offer: offer, clock: clock)
    }

    /// Sends the candidates gathered after the offer by PATCH, as the machine decides, until ICE
    /// and DTLS are up and the trickle is done (or given up), within the connect timeout.
    private func trickleUntilConnected(_ peer: WebRTCPeer, client: WHIPClient, session: WHIPSession,
                                       offer: String) throws(LivePushError) {
        let fragment = TrickleFragment(offer: offer)
        var machine = WHIPPatchStateMachine(trickle: fragment != nil)
        let start = clock.now().microseconds
        let deadline = start + config.connectTimeout.milliseconds * 1000
        let gatheringDeadline = start + Self.iceGatheringTimeout.milliseconds * 1000
        while true {
            let seen = try peer.check()
            let now = clock.now().microseconds
            let (candidates, complete) = peer.takeCandidates()
            for candidate in candidates { machine.gathered(candidate, now: now) }
            // A gathering that outlasts the bound (a STUN server that never answers) ends here.
            if complete || now >= gatheringDeadline { machine.gatheringComplete() }
            var wakeAt: Int64?
            switch machine.next(now: now) {
            case .trickle(let batch, let end):
                guard let fragment else { continue }
                let outcome: WHIPPatchStateMachine.Outcome
                do {
                    outcome = try client.patch(session, sdpFragment: fragment.body(candidates: batch, end: end)) == .applied ? .applied : .notSupported
                } catch {
                    outcome = .failed
                }
                machine.trickled(outcome)
                continue
            case .wait(let until): wakeAt = until
            case .restartICE, .repost: break  // not while connecting: the connect's own timeout and retry cover it
            }
            if seen.peer == .connected, machine.trickleDone || now >= gatheringDeadline { return }
            guard now < deadline else {
                throw LivePushError(.whipTimeout, "the WebRTC connection did not come up within \(config.connectTimeout.milliseconds) ms (ICE \(seen.ice), DTLS \(seen.dtls))")
            }
            let until = min(deadline, wakeAt ?? deadline, machine.trickleDone ? deadline : gatheringDeadline)
            peer.waitForReport(after: seen.reports, limit: .microseconds(max(1_000, until - now)))
        }
    }

    /// webrtcbin's URI of the first server of `scheme` (`stun`, `turn`, or their `s` forms) it can take.
    static func firstURI(of servers: [ICEServer], scheme: String) -> String? {
        servers.lazy.filter { $0.url.lowercased().hasPrefix(scheme) }.compactMap(\.webrtcbinURI).first
    }
}
