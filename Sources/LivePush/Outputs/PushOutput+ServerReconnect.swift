/// The driver of a server's reconnect request (Enhanced RTMP v2
/// `NetConnection.Connect.ReconnectRequest`): the decisions are the
/// ``ServerReconnectStateMachine``'s, in ``OutputState``; here the blocking parts run on
/// connection workers, never on the send loop.
///
/// 1. The send loop reads the request (``RTMPSession/serviceIncoming()``) and hands it here: it
///    is reported (`serverReconnectRequested`) and a worker connects and publishes at the new
///    URL while the old connection goes on carrying the push.
/// 2. Published, the new session waits in the output's state (``ServerReconnectSuccessor``);
///    the send loop ends the old pump before the next keyframe it would send (``PumpOutcome/switchover``).
/// 3. A worker publishes the new session on a send loop, with the stream header (metadata and
///    the sequence headers as they stand) first and the keyframe next, on the same timeline:
///    the receiver sees no gap. Then the old connection's last bytes are written and it is
///    closed gracefully (FCUnpublish, deleteStream), as a stop closes it.
///
/// Not a failure and not a reconnect: no retry is counted and no state changes. A new
/// connection that fails is a warning (`serverReconnectFailed`); the old one goes on, and its
/// own later loss is handled as any loss.
extension PushOutput {
    /// The server asked to move (read on the send loop: nothing here blocks).
    func serverAskedToReconnect(_ request: ServerReconnectRequest) {
        guard kind == .rtmp || kind == .rtmps else { return }
        let decision = state.withLock { state in
            state.serverReconnect.requested(request, current: state.url, publishing: state.publishesForAMove)
        }
        switch decision {
        case .connect(let target):
            signal(.serverReconnectRequested(url: target.redacted, description: request.description))
            ConnectionWorkers.shared.run { self.connectSuccessor(at: target) }
        case .refuse(let refusal):
            signal(.serverReconnectFailed(LivePushError(.reconnectRequestFailed,
                "the server's reconnect request was not followed: \(refusal.reason); the push stays on its connection")))
        default:
            break
        }
    }

    /// On a worker: connect and publish at `target`, then hand the session to the send loop.
    private func connectSuccessor(at target: PushURL) {
        let info = state.withLock { $0.attemptInfo(default: self.info) }
        let session: RTMPSession
        do {
            session = try connectRTMP(target, info)
        } catch {
            guard case .abandon(let cause) = state.withLock({ $0.serverReconnect.newConnectionFailed(error) }) else { return }
            signal(.serverReconnectFailed(LivePushError(.reconnectRequestFailed,
                "the server asked to reconnect, and the new connection to \(target.redacted) failed (\(cause.message)); the push stays on its connection")))
            return
        }
        let successor = ServerReconnectSuccessor(session)
        let (handedOver, loop) = state.withLock { state in (state.handOver(successor), state.loop) }
        if handedOver {
            // Its turn looks at the queue: the switch comes at the next keyframe there.
            loop?.wake(self)
        } else {
            successor.take()?.close(graceful: true)
        }
    }

    /// The old pump ended before the keyframe the new connection starts with: publish the new
    /// one, then close the old one gracefully (on a closing worker: the close lingers).
    func switchOver(from ended: PublishingSlot) {
        let taken = state.withLock { state in
            state.detach()
            return state.takeSuccessorForSwitch()
        }
        ConnectionWorkers.closing.run {
            guard let old = ended.take() else { return }
            if let (successor, _) = taken, let session = successor.take() {
                var resume = old.resume
                // What the old connection took it writes before it closes: the new one starts
                // afresh (its acknowledgements count its own bytes).
                _ = resume.history.takeForResend()
                self.publish(.rtmp(session), resume)
                old.close(graceful: true, drained: true)
            } else {
                // Never: the switch is decided only with a successor waiting. Go on as after a
                // requested reconnect rather than leave the output without a connection.
                old.close(graceful: true, drained: false)
                self.beginReconnecting(after: nil, old.resume)
            }
            self.state.withLock { $0.serverReconnect.oldClosed() }
        }
    }
}
