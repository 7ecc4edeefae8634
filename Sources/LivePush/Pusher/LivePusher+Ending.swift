/// The end of a push: its engine decided it (every output finished, every first connect
/// failed, the source failed) and closed the recording; the pusher keeps what lies between
/// pushes.
extension LivePusher {
    /// Takes the push's final figures and closes it with them, under the lock that holds the
    /// push: its final state and `stopped` (emitted by its ``PushControl``) and the end of the
    /// app's event streams all come before a new start can begin.
    func pushEnded(_ engine: PushEngine) {
        let final = snapshot(engine)
        let outputs = engine.outputs.map { $0.outputStats() }
        cancelTimers()
        slot.withLock { slot in
            guard slot.running === engine else { return }
            let afterStreamsEnd = engine.close(finalStats: final)
            let ended = engine.pushState
            // A push always ends stopped or failed; should it not, it may still start again.
            slot = PushSlot(lastEnd: ended.isActive ? .stopped : ended, lastStats: final, lastOutputs: outputs)
            hub.finishStreams()
            for event in afterStreamsEnd { emit(event) }
        }
    }

    /// Hands an app's call to the running push, which decides it; between pushes it is refused
    /// as the push's state machine would (`cannot pause while idle`).
    func call(_ message: EngineMessage) throws(LivePushError) {
        let (running, lastEnd) = slot.withLock { ($0.running, $0.lastEnd) }
        guard let running else { throw PushControl.refusal(of: message, while: lastEnd) }
        try running.receive(message)
    }

    /// The running push, if any.
    var runningPush: PushEngine? { slot.withLock { $0.running } }
}
