import CWebRTC
import Synchronization

/// One WebRTC peer connection that sends H.264 and Opus, over GStreamer's webrtcbin through
/// the CWebRTC shim (which loads GStreamer at the first peer): the only type that holds its pointer. ICE, DTLS-SRTP, RTP and RTCP are
/// webrtcbin's and libnice's; this type offers, takes the answer, feeds frames and reads what
/// the peer reports. Not for concurrent use, but for its state, which GStreamer's threads set
/// (under `state`, a `Mutex`) and announce (`changed`, a ``ProgressSignal``).
///
/// `@unchecked Sendable` only because it wraps a C handle (webrtcbin's peer, which GStreamer's
/// threads call back into): the handle is used by the connection worker while connecting, then
/// by the output's send loop, and by an ICE restart's job on a connection worker
/// (``restartICE()``, ``setRemoteICE(_:)``: webrtcbin's signals and libnice's agent, both
/// locked inside), which ``WHIPICERestarts`` lets finish before the peer is closed.
final class WebRTCPeer: @unchecked Sendable {
    /// webrtcbin's numbering (GstWebRTCICEConnectionState, GstWebRTCPeerConnectionState,
    /// GstWebRTCDTLSTransportState).
    enum ICEState: Int32 { case new = 0, checking, connected, completed, failed, disconnected, closed }
    enum PeerState: Int32 { case new = 0, connecting, connected, disconnected, failed, closed }
    enum DTLSState: Int32 { case new = 0, closed, failed, connecting, connected }

    /// What GStreamer's threads reported last.
    struct State: Sendable {
        var ice: ICEState = .new
        var peer: PeerState = .new
        var dtls: DTLSState = .new
        var pipelineFailed = false
        /// Keyframe requests (PLI, FIR) not yet taken.
        var keyframeRequests = 0
        /// Trickle ICE: local candidates gathered and not yet taken (at most ``maxHeldCandidates``).
        var candidates: [String] = []
        /// Trickle ICE: gathering ended (reported once, with the last candidates).
        var gatheringComplete = false
        /// Reports so far: a wait for "anything new" compares it.
        var reports = 0
    }

    /// Candidates held for the taker at most; more are dropped (a host has a few addresses).
    static let maxHeldCandidates = 64
    /// A candidate line longer than this is not one libnice writes.
    static let maxCandidateLength = 512

    private var handle: OpaquePointer?
    private let state = Mutex(State())
    /// Woken after each report, for ``waitForReport(after:limit:)``.
    private let changed = ProgressSignal()

    /// The most video layers (simulcast renditions) one peer sends.
    static let maxLayers = Int(LP_WEBRTC_MAX_LAYERS)

    /// `decoderConfigurations`: each video layer's H.264 avcC, the top first (empty: no video;
    /// two or more: simulcast, RFC 8853, layer `i` with the RID `r<i>`); `audioChannels`: 0 for no audio.
    /// `trickle`: the offer is made at once and the candidates gathered later are reported
    /// (``takeCandidates()``); otherwise the offer waits for them.
    init(decoderConfigurations: [[UInt8]], audioChannels: Int, stunServer: String?, turnServer: String?,
         trickle: Bool = false) throws(LivePushError) {
        guard decoderConfigurations.count <= Self.maxLayers else {
            throw LivePushError(.outputSettingsInvalid, "a WHIP output sends at most \(Self.maxLayers) simulcast layers, not \(decoderConfigurations.count)")
        }
        try Self.loadGStreamer()
        var failure: UnsafeMutablePointer<CChar>?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let records = decoderConfigurations.flatMap { $0 }
        let sizes = decoderConfigurations.map(\.count)
        let made: OpaquePointer? = records.withUnsafeBufferPointer { record in
            sizes.withUnsafeBufferPointer { sizes in
                withOptionalCString(stunServer) { stun in
                    withOptionalCString(turnServer) { turn in
                        var config = lp_webrtc_config(avcc: record.isEmpty ? nil : record.baseAddress, avcc_sizes: sizes.baseAddress,
                                                      video_layers: Int32(sizes.count),
                                                      audio_channels: Int32(audioChannels), stun_server: stun, turn_server: turn,
                                                      callback: { context, event, value in
                                                          guard let context else { return }
                                                          Unmanaged<WebRTCPeer>.fromOpaque(context).takeUnretainedValue().report(event, value)
                                                      },
                                                      candidate_callback: trickle ? { context, _, candidate in
                                                          guard let context else { return }
                                                          let peer = Unmanaged<WebRTCPeer>.fromOpaque(context).takeUnretainedValue()
                                                          peer.gathered(candidate.map { String(cString: $0) })
                                                      } : nil,
                                                      context: context)
                        return lp_webrtc_new(&config, &failure)
                    }
                }
            }
        }
        guard let made else { throw LivePushError(.connectFailed, Self.take(failure) ?? "WebRTC could not start") }
        handle = made
    }

    deinit { close() }

    /// GStreamer is loaded (dlopen) at the first WHIP output, once per process: nothing else
    /// links it. Throws ``LivePushError/Code/webrtcUnavailable`` naming what is missing.
    static func loadGStreamer() throws(LivePushError) {
        var failure: UnsafeMutablePointer<CChar>?
        guard lp_webrtc_load(&failure) == 0 else {
            throw LivePushError(.webrtcUnavailable, take(failure) ?? "GStreamer could not be loaded")
        }
    }

    /// Our offer, with the candidates gathered within `gatherTimeout`; `.zero` (trickle ICE):
    /// at once, with none (they come through ``takeCandidates()``).
    func makeOffer(gatherTimeout: Duration) throws(LivePushError) -> String {
        var failure: UnsafeMutablePointer<CChar>?
        guard let handle, let offer = lp_webrtc_create_offer(handle, Int32(clamping: gatherTimeout.milliseconds), &failure) else {
            throw LivePushError(.connectFailed, Self.take(failure) ?? "no offer")
        }
        defer { lp_webrtc_free_string(offer) }
        return String(cString: offer)
    }

    func accept(answer: String) throws(LivePushError) {
        var failure: UnsafeMutablePointer<CChar>?
        guard let handle, lp_webrtc_set_answer(handle, answer, &failure) == 0 else {
            // GStreamer's message may quote the endpoint's answer: escaped and cut like any peer text.
            throw LivePushError(.whipServerError, TerminalText.escape(Self.take(failure) ?? "the answer was refused", limit: 200))
        }
    }

    /// The state now; throws once the connection has failed. `iceFailureIsFatal` false: a
    /// failed ICE is left to the caller (a published session restarts it, ``WHIPICERestarts``).
    func check(iceFailureIsFatal: Bool = true) throws(LivePushError) -> State {
        let now = state.withLock { $0 }
        if let failure = Self.failure(in: now), iceFailureIsFatal || failure.code != .iceFailed { throw failure }
        return now
    }

    /// Our side of an ICE restart: libnice's stream restarted with new credentials, returned
    /// with our local candidates (each `candidate:...`) for the PATCH.
    func restartICE() throws(LivePushError) -> (ufrag: String, password: String, candidates: [String]) {
        var ufrag: UnsafeMutablePointer<CChar>?, password: UnsafeMutablePointer<CChar>?, candidates: UnsafeMutablePointer<CChar>?
        var failure: UnsafeMutablePointer<CChar>?
        guard let handle, lp_webrtc_restart_ice(handle, &ufrag, &password, &candidates, &failure) == 0,
              let newUfrag = Self.take(ufrag), let newPassword = Self.take(password), let lines = Self.take(candidates) else {
            _ = (Self.take(ufrag), Self.take(password), Self.take(candidates))
            throw LivePushError(.iceFailed, Self.take(failure) ?? "the ICE restart failed")
        }
        return (newUfrag, newPassword, lines.split(separator: "\n").map(String.init))
    }

    /// The endpoint's side of an ICE restart: its new credentials and its candidates; libnice
    /// checks again and nominates a pair.
    func setRemoteICE(_ answer: ICERestartAnswer) throws(LivePushError) {
        guard let handle else { return }
        var failure: UnsafeMutablePointer<CChar>?
        // One per line: ICERestartAnswer keeps only printable ASCII.
        let result = lp_webrtc_set_remote_ice(handle, answer.ufrag, answer.password, answer.candidates.joined(separator: "\n"), &failure)
        guard result == 0 else { throw LivePushError(.iceFailed, Self.take(failure) ?? "the endpoint's ICE credentials were refused") }
    }

    /// Takes the candidates gathered since the last call, and whether gathering has ended.
    func takeCandidates() -> (candidates: [String], complete: Bool) {
        state.withLock { state in
            defer { state.candidates = [] }
            return (state.candidates, state.gatheringComplete)
        }
    }

    /// Waits until something is reported after `seen` (``State/reports``), at most `limit`.
    func waitForReport(after seen: Int, limit: Duration) {
        changed.wait(limit: limit) { state.withLock { $0.reports != seen } }
    }

    /// Takes the keyframe requests reported since the last call.
    func takeKeyframeRequests() -> Int {
        state.withLock { state in
            defer { state.keyframeRequests = 0 }
            return state.keyframeRequests
        }
    }

    private static func failure(in state: State) -> LivePushError? {
        if state.dtls == .failed { return LivePushError(.dtlsFailed) }
        if state.ice == .failed { return LivePushError(.iceFailed) }
        if state.peer == .failed { return LivePushError(.iceFailed, "the peer connection failed") }
        if state.dtls == .closed { return LivePushError(.connectionLost, "the WebRTC peer closed the DTLS session") }
        if state.pipelineFailed { return LivePushError(.connectionLost, "the WebRTC pipeline failed") }
        return nil
    }

    /// Queues one frame: H.264 AVCC of video layer `layer`, or one Opus packet (`layer` nil); never blocks.
    func send(layer: Int?, _ data: [UInt8], pts: Int64, duration: Int64, keyframe: Bool) {
        guard let handle else { return }
        _ = data.withUnsafeBufferPointer { bytes in
            lp_webrtc_push(handle, Int32(layer ?? -1), bytes.baseAddress, bytes.count, pts, duration, keyframe ? 1 : 0)
        }
    }

    /// What the peer's receiver reports say, with our send counters; nil when webrtcbin has not
    /// answered within 200 ms (it answers at once unless its thread is stuck, and the caller is
    /// a send loop shared by other outputs).
    func statistics() -> lp_webrtc_stats? {
        guard let handle else { return nil }
        var stats = lp_webrtc_stats()
        return lp_webrtc_get_stats(handle, &stats, 200) == 0 ? stats : nil
    }

    func close() {
        guard let handle else { return }
        self.handle = nil
        lp_webrtc_free(handle)
    }

    // MARK: - From GStreamer's threads

    private func gathered(_ candidate: String?) {
        state.withLock { state in
            state.reports += 1
            guard let candidate else {
                state.gatheringComplete = true
                return
            }
            // It goes into a PATCH body line: no line breaks, nothing unbounded.
            guard candidate.utf8.count <= Self.maxCandidateLength, !candidate.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }),
                  state.candidates.count < Self.maxHeldCandidates else { return }
            state.candidates.append(candidate)
        }
        changed.wake()
    }

    private func report(_ event: Int32, _ value: Int32) {
        state.withLock { state in
            state.reports += 1
            switch Int(event) {
            case Int(LP_WEBRTC_ICE_STATE): state.ice = ICEState(rawValue: value) ?? state.ice
            case Int(LP_WEBRTC_PEER_STATE): state.peer = PeerState(rawValue: value) ?? state.peer
            case Int(LP_WEBRTC_DTLS_STATE): state.dtls = DTLSState(rawValue: value) ?? state.dtls
            case Int(LP_WEBRTC_KEYFRAME_REQUEST): state.keyframeRequests += 1
            case Int(LP_WEBRTC_PIPELINE_ERROR): state.pipelineFailed = true
            default: break
            }
        }
        changed.wake()
    }

    private static func take(_ text: UnsafeMutablePointer<CChar>?) -> String? {
        guard let text else { return nil }
        defer { lp_webrtc_free_string(text) }
        return String(cString: text)
    }
}

private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
