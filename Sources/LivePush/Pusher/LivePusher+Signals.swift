/// What the session reports, as the pusher's state changes and events: the push as a whole
/// (folded by ``OutputSetStateMachine``), each output's own events, and the source's failure.
extension LivePusher {
    func handle(_ signal: PushEngine.Signal) {
        switch signal {
        case .push(let whole):
            handle(whole)
        case .sourceFailed(let error):
            fail(error)
        case .output(let id, let url, let outputSignal):
            if let event = Self.event(for: outputSignal) { emit(.output(id: id, url: url, event)) }
        }
    }

    /// What the push as a whole reports, as state changes and events.
    private func handle(_ signal: PushOutput.Signal) {
        switch signal {
        case .published(let url):
            // A stop during connecting wins: the session is already winding down.
            try? transition(.published, emitting: [.pushStarted(url: url)])
        case .firstFrameSent:
            emit(.firstFramePushed)
        case .connectionLost(let error):
            var events: [PushEvent] = error.code == .sendDataTimeout ? [.sendDataTimeout] : []
            events.append(.connectionLost(error))
            try? transition(.lost, emitting: events)
        case .reconnectRequested:
            try? transition(.lost)
        case .reconnecting(let attempt):
            emit(.reconnectStarted(attempt: attempt))
        case .staleSession(let attempt, let waited, let retryIn):
            emit(.staleSession(attempt: attempt, waited: waited, retryIn: retryIn))
        case .retryScheduled(let attempt, let delay, let cause):
            emit(.retryScheduled(attempt: attempt, delay: delay, cause: cause))
        case .reconnected:
            try? transition(.reconnected, emitting: [.reconnectSucceeded])
        case .reconnectFailed(let cause):
            emit(.reconnectFailed(LivePushError(.reconnectFailed, cause.message)))
            emit(.sdkError(cause))
        case .network(.poor):
            emit(.networkPoor)
        case .network(.recovered):
            emit(.networkRecovered)
        case .connectFailed(let error):
            emit(.connectFailed(error))
            fail(error)
        case .finished:
            finish(.finished)
        case .networkQuality(let quality):
            emit(.networkQualityChanged(quality))
        case .keyframeRequested:
            break  // never forwarded: the session asks the producer for a keyframe
        }
        if isInteractive, let status = Self.connectionStatus(after: signal) { emit(.connectionStatusChanged(status)) }
    }

    /// Interactive mode's connection status, from what the push as a whole did.
    private static func connectionStatus(after signal: PushOutput.Signal) -> ConnectionStatus? {
        switch signal {
        case .published, .reconnected: .connected
        case .reconnecting, .reconnectRequested: .connecting
        case .connectionLost, .finished: .disconnected
        case .connectFailed, .reconnectFailed: .failed
        default: nil
        }
    }

    private func fail(_ error: LivePushError) {
        emit(error.code == .outOfMemory || error.code == .rtmpStartFailed ? .systemError(error) : .sdkError(error))
        finish(.fail(error))
    }

    /// The event an output's signal is reported as, tagged with the output (simulcast).
    private static func event(for signal: PushOutput.Signal) -> PushEvent? {
        switch signal {
        case .published(let url): .pushStarted(url: url)
        case .firstFrameSent: .firstFramePushed
        case .connectionLost(let error): .connectionLost(error)
        case .reconnectRequested, .finished: nil
        case .reconnecting(let attempt): .reconnectStarted(attempt: attempt)
        case .staleSession(let attempt, let waited, let retryIn): .staleSession(attempt: attempt, waited: waited, retryIn: retryIn)
        case .retryScheduled(let attempt, let delay, let cause): .retryScheduled(attempt: attempt, delay: delay, cause: cause)
        case .reconnected: .reconnectSucceeded
        case .reconnectFailed(let cause): .reconnectFailed(LivePushError(.reconnectFailed, cause.message))
        case .network(.poor): .networkPoor
        case .network(.recovered): .networkRecovered
        case .connectFailed(let error): .connectFailed(error)
        case .networkQuality(let quality): .networkQualityChanged(quality)
        case .keyframeRequested: nil
        }
    }

    private func finish(_ input: PushStateMachine.Input) {
        let (final, outputs) = session.withLock { current -> (PushStats, [OutputStats]) in
            let figures = (current.map { snapshot($0) } ?? PushStats(), current?.outputs.map { $0.outputStats() } ?? [])
            current = nil
            return figures
        }
        lastStats.withLock { $0 = final }
        lastOutputs.withLock { $0 = outputs }
        cancelTimers()
        do {
            try transition(input, emitting: [.stopped(final)])
        } catch {
            emit(.stopped(final))
        }
        hub.finishStreams()
    }
}
