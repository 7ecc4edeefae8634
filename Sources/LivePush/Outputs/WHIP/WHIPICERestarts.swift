import Synchronization

/// ICE restarts of a published WHIP session (RFC 9725 §4.4): the thin driver of
/// ``WHIPPatchStateMachine``'s restart decisions, fed at the send loop's service turns.
///
/// The path counts as lost when webrtcbin reports ICE failed or disconnected, or when the
/// endpoint's receiver reports stop moving while we send (``WHIPPathWatch``: libnice does not
/// notice a cut path by itself). A restart is a job on a connection worker, never the send
/// loop: libnice's stream restarted with new credentials (``WebRTCPeer/restartICE()``), the
/// PATCH with them and our candidates, then the endpoint's new credentials and candidates
/// given to libnice, which checks again; RTP, RTCP and the DTLS session go on over the pair it
/// selects, with no new offer and no new POST. An endpoint that does no restarts, or a session
/// whose restarts did not bring the path back, ends the connection: the output's reconnect
/// POSTs again, as before.
final class WHIPICERestarts: Sendable {
    private struct State: Sendable {
        var machine = WHIPPatchStateMachine(trickle: false)
        var watch = WHIPPathWatch()
        var session: WHIPSession
        /// A restart job is running: the peer stays open until it ends.
        var running = false
        /// The connection closed while a job ran: the job closes the peer.
        var closeDeferred = false
        /// Restarts the endpoint accepted, for the connection's figures.
        var applied = 0
        /// Why the last restart failed, for the error that ends the session.
        var lastFailure: String?
    }

    /// Errors that say the PATCH never reached the endpoint: the link is down, not the endpoint
    /// unwilling, so the restart is tried again.
    private static let unreachable: Set<LivePushError.Code> = [.connectFailed, .connectionRefused, .hostNotFound, .connectionLost]

    private let state: Mutex<State>
    private let peer: WebRTCPeer
    private let client: WHIPClient
    /// The offer's first media section, which the restart's fragment repeats with new
    /// credentials; nil when the offer had none (no restart: a new POST).
    private let fragment: TrickleFragment?
    private let clock: any MonotonicClock

    init(peer: WebRTCPeer, client: WHIPClient, session: WHIPSession, offer: String, clock: any MonotonicClock) {
        self.peer = peer
        self.client = client
        fragment = TrickleFragment(offer: offer)
        self.clock = clock
        state = Mutex(State(session: session))
    }

    /// The session as it is now (a restart's answer may have given it a new ETag).
    var session: WHIPSession { state.withLock { $0.session } }
    /// Restarts the endpoint accepted so far.
    var applied: Int { state.withLock { $0.applied } }

    /// One service turn: ICE's state and, once a second, the statistics. Returns the error that
    /// ends the connection when the session is lost for PATCH (a new POST is due).
    func turn(ice: WebRTCPeer.ICEState, stats: (highestSequence: UInt64, packetsSent: UInt64)?, now: Int64) -> LivePushError? {
        let (start, repost, why): (Bool, Bool, String?) = state.withLock { state in
            var input: WHIPPatchStateMachine.ICE?
            if ice == .failed || ice == .disconnected {
                input = .lost
            } else if let stats {
                input = state.watch.observe(highestSequence: stats.highestSequence, packetsSent: stats.packetsSent, now: now)
                // An endpoint that sends no receiver reports is judged by ICE alone.
                if input == .checking, !state.watch.judges, ice == .connected || ice == .completed { input = .connected }
            }
            if let input { state.machine.ice(input, now: now) }
            switch state.machine.next(now: now) {
            case .restartICE:
                state.running = true
                return (true, false, nil)
            case .repost: return (false, true, state.lastFailure)
            case .trickle, .wait: return (false, false, nil)
            }
        }
        if start { _ = ConnectionWorkers.shared.run { self.restart() } }
        guard repost else { return nil }
        return LivePushError(.iceFailed, "the WebRTC path was lost and ICE restarts did not bring it back" + (why.map { " (\($0))" } ?? ""))
    }

    /// Closes the peer now, or when the running restart ends.
    func closePeer() {
        let now = state.withLock { state in
            if state.running { state.closeDeferred = true }
            return !state.running
        }
        if now { peer.close() }
    }

    /// The job: restart, PATCH, answer. What it came to goes to the machine.
    private func restart() {
        let outcome: WHIPPatchStateMachine.Outcome
        var failure: String?
        do {
            outcome = try restartOnce()
        } catch {
            outcome = Self.unreachable.contains(error.code) ? .unreachable : .failed
            failure = error.description
        }
        let close = state.withLock { state in
            state.running = false
            state.machine.restarted(outcome, now: clock.now().microseconds)
            if outcome == .applied {
                state.applied += 1
                state.watch.restarted(now: clock.now().microseconds)
            } else {
                state.lastFailure = failure ?? "the endpoint does no ICE restarts"
            }
            return state.closeDeferred
        }
        if close { peer.close() }
    }

    private func restartOnce() throws(LivePushError) -> WHIPPatchStateMachine.Outcome {
        guard let fragment else { return .notSupported }
        let session = state.withLock { $0.session }
        let ours = try peer.restartICE()
        let body = fragment.restarted(ufrag: ours.ufrag, password: ours.password).body(candidates: ours.candidates, end: true)
        switch try client.restartICE(session, sdpFragment: body) {
        case .notSupported:
            return .notSupported
        case .restarted(let text, let etag):
            guard let answer = ICERestartAnswer(fragment: text, sessionAnswer: session.answer) else {
                throw LivePushError(.whipServerError, "the ICE restart's answer has no valid ice-ufrag and ice-pwd")
            }
            try peer.setRemoteICE(answer)
            state.withLock { state in
                state.session = WHIPSession(answer: session.answer, resource: session.resource, etag: etag ?? session.etag,
                                            iceServers: session.iceServers)
            }
            return .applied
        }
    }
}
