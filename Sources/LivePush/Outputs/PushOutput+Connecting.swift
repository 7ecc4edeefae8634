import LivePushWire

/// Connecting and reconnecting: blocking librtmp or libsrt calls, on a connection worker that
/// runs only while the output connects. Once published, the connection goes to a
/// ``SendLoop`` (``Publishing``); when its pump ends, the loop hands it back here.
///
/// After a reconnect the server gets the stream header again (metadata, sequence headers)
/// and the stream resumes on a keyframe with timestamps that continue where they stopped:
/// - real time: from the first keyframe in the queue (what the outage cost beyond the queue
///   is lost, as it would be for a live camera);
/// - `--fast`: what may not have reached the server is sent again, from the keyframe before
///   it, re-stamped to follow the last timestamp sent, so no frame is lost (the server may see
///   some frames twice). What reached it is what it acknowledged (``ResendHistory``).
extension PushOutput {
    enum PumpOutcome {
        case drained, stopped, reconnectRequested
        case lost(LivePushError)

        var isDrained: Bool {
            if case .drained = self { true } else { false }
        }
    }

    /// What the sender remembers across connections.
    struct ResumeState {
        /// Added to every timestamp sent; grows when a GOP is sent again
        /// (``OutputClock/resendOffset(lastSent:step:first:)``).
        var shift: Int64 = 0
        /// The codec configuration, followed across connections (sequence headers): the next
        /// connection's header.
        var info: StreamInfo
        /// Output dts of the last packet sent.
        var lastSentDTS: Int64 = 0
        /// In `--fast` mode: what the server has not acknowledged yet, from a keyframe on.
        var history: ResendHistory
        var firstFrameSent = false
    }

    /// One episode of connecting: the first connect, or reconnecting after a loss or a request.
    /// Between two attempts it is a timer of the ``ConnectionWorkers``, not a thread.
    struct ConnectEpisode {
        var machine: ReconnectStateMachine
        var resume: ResumeState
        /// The first connect: success is `published`, and giving up (or, unless
        /// `retriesFirstConnect`, any failure) is `connectFailed`.
        let isFirst: Bool
        /// The next attempt, while it waits.
        var ticket: ConnectionWorkers.Ticket?
        /// Out of retries: waiting for `reconnect()` or `stop()`.
        var gaveUp = false
    }

    func startConnecting() {
        let resume = ResumeState(info: info,
                                 history: ResendHistory(limits: .init(fallbackWindow: fallbackUnconfirmedWindow),
                                                        hasVideo: info.video != nil))
        lock.withLock { episode = ConnectEpisode(machine: makeReconnectMachine(), resume: resume, isFirst: true) }
        schedule(after: .zero)
    }

    private func makeReconnectMachine() -> ReconnectStateMachine {
        ReconnectStateMachine(
            policy: ReconnectPolicy(maxAttempts: config.connectRetryCount, interval: config.connectRetryInterval,
                                    backoff: config.connectRetryBackoff, maxInterval: config.connectRetryMaxInterval,
                                    jitter: config.connectRetryJitter),
            stale: .init(grace: config.staleSessionGrace,
                         initialInterval: max(.milliseconds(250), min(config.connectRetryInterval, config.staleSessionMaxInterval)),
                         maxInterval: config.staleSessionMaxInterval))
    }

    private func schedule(after delay: Duration) {
        // A stop asked for while the last attempt ran is not kept waiting.
        let delay = lock.withLock { stopRequested } ? .zero : delay
        let ticket = ConnectionWorkers.shared.run(after: delay) { self.attempt() }
        lock.withLock { if episode?.ticket == nil { episode?.ticket = ticket } }
    }

    /// One attempt, on a connection worker.
    private func attempt() {
        let stopped = lock.withLock {
            episode?.ticket = nil
            reconnectRequested = false
            return stopRequested
        }
        if stopped { return finishAfterStop() }
        do {
            let connection = try connect(lock.withLock { self.episode?.resume.info } ?? info)
            let episode = lock.withLock {
                connected = true
                queue.isDisconnected = false
                defer { self.episode = nil }
                return self.episode!
            }
            signal(episode.isFirst ? .published(url: connection.url.redacted) : .reconnected(url: connection.url.redacted))
            publish(connection, episode.resume)
        } catch {
            let (decision, isFirst) = lock.withLock { () -> (ReconnectStateMachine.Decision, Bool) in
                let isFirst = self.episode!.isFirst
                if isFirst && !config.retriesFirstConnect { return (.giveUp(error), true) }
                return (self.episode!.machine.attemptFailed(error, now: monotonicMicroseconds()), isFirst)
            }
            follow(decision, after: error, isFirst: isFirst)
        }
    }

    /// Carries out what the ``ReconnectStateMachine`` decided after `error`.
    private func follow(_ decision: ReconnectStateMachine.Decision, after error: LivePushError?, isFirst: Bool) {
        switch decision {
        case .giveUp(let cause) where isFirst:
            lock.withLock {
                stopRequested = true
                episode = nil
            }
            signal(.connectFailed(cause))
        case .giveUp(let cause):
            lock.withLock { episode?.gaveUp = true }
            signal(.reconnectFailed(cause))
            // A stop asked for meanwhile found no attempt waiting: it ends the episode now.
            if lock.withLock({ stopRequested }) { schedule(after: .zero) }
        case .retry(let attempt, let delay):
            if !isFirst { signal(.reconnecting(attempt: attempt)) }
            if let error { signal(.retryScheduled(attempt: attempt, delay: delay, cause: error)) }
            schedule(after: delay)
        case .awaitStaleSession(let attempt, let waited, let delay):
            signal(.staleSession(attempt: attempt, waited: waited, retryIn: delay))
            schedule(after: delay)
        }
    }

    /// While the output connects, a stop or a reconnect request runs the waiting attempt now;
    /// an episode that gave up starts again (a reconnect) or ends (a stop). False when no
    /// episode runs: the output publishes, and its pump ends on the request.
    func resumeEpisode(reconnect: Bool) -> Bool {
        enum Step { case runNow(ConnectionWorkers.Ticket), restart, wait }
        let step = lock.withLock { () -> Step? in
            guard var current = episode else { return nil }
            if let ticket = current.ticket { return .runNow(ticket) }
            // An attempt is running; it looks at the stop when it ends.
            guard current.gaveUp else { return .wait }
            current.gaveUp = false
            if !stopRequested { _ = current.machine.begin(after: nil) }
            episode = current
            return .restart
        }
        switch step {
        case nil:
            return false
        case .runNow(let ticket):
            ConnectionWorkers.shared.runNow(ticket)
        case .restart:
            if reconnect && !lock.withLock({ stopRequested }) { signal(.reconnecting(attempt: 1)) }
            schedule(after: .zero)
        case .wait:
            break
        }
        return true
    }

    /// Hands a published connection to a send loop, the stream header first.
    private func publish(_ connection: Connected, _ resume: ResumeState) {
        let headerTime = lock.withLock { queue.items.first.map { $0.dts + resume.shift } } ?? resume.lastSentDTS
        let loop = SendLoop.next()
        lock.withLock {
            self.loop = loop
            lastLoopIndex = loop.index
        }
        switch connection {
        case .rtmp(let session):
            loop.attach(Publishing(output: self, connection: RTMPConnection(session: session, info: resume.info),
                                   resume: resume, headerTime: headerTime))
        case .srt(let session, let muxer):
            loop.attach(Publishing(output: self, connection: SRTConnection(session: session, muxer: muxer),
                                   resume: resume, headerTime: headerTime))
        case .whip(let connection, _):
            loop.attach(Publishing(output: self, connection: connection, resume: resume, headerTime: headerTime))
        }
    }

    /// Called by the send loop when a connection's pump ended. A graceful close waits for the
    /// server to close its side (``RTMPSession/close(graceful:lingering:)``), so it is done by a
    /// worker (``ConnectionWorkers/closing``), like a reconnect: the loop never blocks.
    func pumpEnded(_ outcome: PumpOutcome, _ publishing: any PublishingTurns) {
        lock.withLock { loop = nil }
        let ended = UncheckedTransfer(value: publishing)
        switch outcome {
        case .drained, .stopped:
            ConnectionWorkers.closing.run {
                ended.value.close(graceful: true, drained: outcome.isDrained)
                self.signal(.finished)
            }
        case .reconnectRequested:
            ConnectionWorkers.shared.run {
                ended.value.close(graceful: true, drained: false)
                self.signal(.reconnectRequested)
                self.beginReconnecting(after: nil, ended.value.resume)
            }
        case .lost(let error):
            // Heard at once; the close runs on a worker too: a WHIP session's close is an HTTP
            // DELETE (DNS, connect, TLS), which must not hold the loop and every output on it.
            signal(.connectionLost(error))
            ConnectionWorkers.closing.run {
                ended.value.close(graceful: false, drained: false)
                self.beginReconnecting(after: error, ended.value.resume)
            }
        }
    }

    /// Starts reconnecting after a lost connection (`error`) or a requested reconnect (nil).
    private func beginReconnecting(after error: LivePushError?, _ resume: ResumeState) {
        var resume = resume
        let decision = lock.withLock {
            reconnectRequested = false
            connected = false
            queue.isDisconnected = true
            prepareResume(&resume)
            episode = ConnectEpisode(machine: makeReconnectMachine(), resume: resume, isFirst: false)
            return episode!.machine.begin(after: error)
        }
        follow(decision, after: error, isFirst: false)
    }

    private func finishAfterStop() {
        lock.withLock {
            stopRequested = true
            episode = nil
            queue.isDisconnected = false
        }
        signal(.finished)
    }

    /// A connection made, before it publishes.
    enum Connected {
        case rtmp(RTMPSession)
        /// With the muxer for its stream, made before connecting: a stream MPEG-TS cannot carry
        /// fails the connect rather than the publish.
        case srt(SRTSession, TSMuxer)
        /// Offered, answered and connected (ICE and DTLS).
        case whip(WHIPConnection, PushURL)

        var url: PushURL {
            switch self {
            case .rtmp(let session): session.url
            case .srt(let session, _): session.url
            case .whip(_, let url): url
            }
        }
    }

    private func connect(_ info: StreamInfo) throws(LivePushError) -> Connected {
        let url = lock.withLock { self.url }
        if url.isWHIP { return .whip(try connectWHIP(url, info), url) }
        if url.scheme == .srt {
            let muxer = try SRTConnection.muxer(for: info)
            let options = SRTSession.Options(connectTimeout: config.connectTimeout, peerIdleTimeout: config.sendDataTimeout)
            return .srt(try SRTSession(url: url, options: options), muxer)
        }
        let options = RTMPSession.Options(connectTimeout: config.connectTimeout, receiveTimeout: config.responseTimeout,
                                          sendTimeout: config.sendDataTimeout, chunkSize: Int32(config.chunkSize),
                                          sendBufferBytes: config.socketSendBufferBytes, tls: config.tls,
                                          acknowledgementWindow: queue.mode == .backpressure ? Self.acknowledgementWindow : nil,
                                          fourCcList: info.video?.codec.enhancedRTMP.map { [$0.fourCC] } ?? [])
        let session = try RTMPSession(url: url, options: options)
        do {
            try session.connectAndPublish()
        } catch {
            let rejected: Set<LivePushError.Code> = [.publishRejected, .connectRejected, .handshakeFailed]
            if rejected.contains(error.code) && isURLExpired() {
                throw LivePushError(.authExpired, "the server rejected the push URL after its auth_key expired (\(error.message))")
            }
            throw error
        }
        return .rtmp(session)
    }

    /// How often the server is asked to acknowledge what it read, in `--fast` mode.
    static let acknowledgementWindow: UInt32 = 256 * 1024

    /// Bytes assumed in flight before a server's first acknowledgement: our send buffer (the
    /// kernel doubles what `SO_SNDBUF` asks for) plus the server's receive buffer, which Linux
    /// grows up to 6 MiB by default (`tcp_rmem`).
    private var fallbackUnconfirmedWindow: Int64 {
        Int64(2 * (config.socketSendBufferBytes ?? 2 * 1024 * 1024) + 8 * 1024 * 1024)
    }

    /// Called with the lock held: decides where the new connection starts.
    private func prepareResume(_ resume: inout ResumeState) {
        let resend = resume.history.takeForResend()
        if queue.mode == .backpressure, let first = resend.first,
           ResendHistory.canOpenAConnection(with: resend, hasVideo: info.video != nil) {
            queue.pushFront(resend)
            // What is sent again follows the last timestamp sent by one frame.
            let step = info.video.map { $0.frameRate > 0 ? Int64(1_000_000 / $0.frameRate) : 40_000 } ?? 23_000
            resume.shift = OutputClock.resendOffset(lastSent: resume.lastSentDTS, step: step, first: first.dts)
        } else {
            queue.startAtKeyframe()
        }
    }
}
