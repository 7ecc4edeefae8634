/// One output's answer to a server's reconnect request (``ServerReconnectRequest``): connect
/// again in the background, publish there, switch the media over at a video keyframe, then
/// close the old connection gracefully. Pure: events in, decisions out; the driver
/// (`PushOutput+ServerReconnect.swift`) connects, hands over and closes.
///
/// The old connection carries the push until the switch: a new connection that fails leaves it
/// as it was (a warning, not a failure), and it never counts against the reconnect policy's
/// retries. One move at a time: a request while one runs is ignored.
///
///     idle -request-> connecting -published-> awaitingKeyframe -switched-> closingOld -closed-> idle
///                        |                         |
///                        +-failed / output down----+--> idle (the new connection closed, if any)
struct ServerReconnectStateMachine: Equatable {
    enum Phase: Equatable {
        case idle
        /// Connecting to and publishing at the target, on a connection worker.
        case connecting(PushURL)
        /// Published at the target; the send loop switches at the next keyframe it takes.
        case awaitingKeyframe(PushURL)
        /// Switched: the media goes to the target; the old connection is closing.
        case closingOld(PushURL)
    }

    enum Decision: Equatable {
        /// Report the request (`reconnectRequested`) and connect to this URL in the background.
        case connect(PushURL)
        /// Do not follow the request; report why as a warning and keep publishing.
        case refuse(ServerReconnectTarget.Refusal)
        /// A move is already under way, or the output does not publish: nothing to do.
        case ignore
        /// Hand the new connection to the send loop, to be switched to at the next keyframe.
        case handOver
        /// The new connection is not wanted any more (the old one was lost, or the output
        /// stops): close it, and the push goes on as it would have without the request.
        case closeNew
        /// The new connection failed: report a warning, keep publishing on the old one.
        case abandon(LivePushError)
        /// The media is on the new connection: close the old one gracefully; the output's URL
        /// is the target from now on (its later reconnects go there).
        case closeOld(PushURL)
    }

    private(set) var phase = Phase.idle

    var isIdle: Bool { phase == .idle }

    /// The server asked: where to go, from the output's `current` URL, if the output publishes.
    mutating func requested(_ request: ServerReconnectRequest, current: PushURL, publishing: Bool) -> Decision {
        guard phase == .idle, publishing else { return .ignore }
        switch ServerReconnectTarget.resolve(request, current: current) {
        case .failure(let refusal):
            return .refuse(refusal)
        case .success(let target):
            phase = .connecting(target)
            return .connect(target)
        }
    }

    /// The new connection published. `stillPublishing`: the old one still carries the push
    /// (not lost, not stopping).
    mutating func newConnectionPublished(stillPublishing: Bool) -> Decision {
        guard case .connecting(let target) = phase else { return .closeNew }
        guard stillPublishing else {
            phase = .idle
            return .closeNew
        }
        phase = .awaitingKeyframe(target)
        return .handOver
    }

    /// The new connection could not be made or published.
    mutating func newConnectionFailed(_ error: LivePushError) -> Decision {
        guard case .connecting = phase else { return .ignore }
        phase = .idle
        return .abandon(error)
    }

    /// The send loop switched the media to the new connection at a keyframe.
    mutating func switched() -> Decision {
        guard case .awaitingKeyframe(let target) = phase else { return .ignore }
        phase = .closingOld(target)
        return .closeOld(target)
    }

    /// The old connection is closed: another request may be followed.
    mutating func oldClosed() {
        if case .closingOld = phase { phase = .idle }
    }

    /// The old connection's pump ended (lost, stopped or drained) before the switch: the new
    /// connection, handed over or not, goes with it, and the output's own reconnect (or end)
    /// takes over. True when a handed-over connection is to be closed.
    mutating func pumpEnded() -> Bool {
        switch phase {
        case .awaitingKeyframe:
            phase = .idle
            return true
        case .connecting:
            // The attempt still runs: it finds the output down when it publishes (closeNew).
            return false
        case .closingOld, .idle:
            return false
        }
    }
}
