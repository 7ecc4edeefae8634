/// The part of ``OutputState`` that follows a server's reconnect request
/// (``ServerReconnectStateMachine``): whether the output can move now, and when the send loop
/// switches to the new connection. The connecting and closing are ``PushOutput``'s
/// (`PushOutput+ServerReconnect.swift`).
extension OutputState {
    /// Whether the output publishes on a connection that a move would replace: connected,
    /// served by a send loop, not stopping.
    var publishesForAMove: Bool {
        connected && loop != nil && episode == nil && !stopRequested && !reconnectRequested
    }

    /// The send loop ends the old connection's pump here, before it takes the packet the new
    /// connection starts with: a video keyframe (the sequence headers go first, as the new
    /// connection's header), or any audio frame of a stream without video. The packet stays in
    /// the queue for the new connection.
    var successorTakesOver: Bool {
        guard successor != nil, !paused, let next = queue.items.first else { return false }
        if carriesVideo { return next.kind == .video && next.isKeyframe && !next.isSequenceHeader }
        return next.kind == .audio && !next.isSequenceHeader
    }

    /// The published successor is handed over: the send loop switches at the next keyframe.
    /// False when the output no longer publishes (the successor is to be closed).
    mutating func handOver(_ next: ServerReconnectSuccessor) -> Bool {
        switch serverReconnect.newConnectionPublished(stillPublishing: publishesForAMove) {
        case .handOver:
            successor = next
            return true
        default:
            return false
        }
    }

    /// The pump ended at the switch: the successor, to be published, and the URL it goes to
    /// (the output's URL from now on, for its later reconnects).
    mutating func takeSuccessorForSwitch() -> (ServerReconnectSuccessor, PushURL)? {
        guard let next = successor.take(), case .closeOld(let target) = serverReconnect.switched() else {
            _ = serverReconnect.pumpEnded()
            return nil
        }
        url = target
        return (next, target)
    }

    /// The pump ended otherwise (lost, stopped, drained): a successor waiting goes with it.
    mutating func pumpEndedBeforeSwitch() -> ServerReconnectSuccessor? {
        _ = serverReconnect.pumpEnded()
        return successor.take()
    }
}
