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
    enum PumpOutcome: Sendable {
        case drained, stopped, reconnectRequested
        case lost(LivePushError)
        /// A server's reconnect request: the new connection takes over at the keyframe that
        /// is next in the queue (`PushOutput+ServerReconnect.swift`).
        case switchover

        var isDrained: Bool {
            if case .drained = self { true } else { false }
        }

        /// Whether the pump ends only once the socket took every byte (the stream, or its part
        /// on this connection, was sent whole).
        var endsFlushed: Bool {
            switch self {
            case .drained, .switchover: true
            default: false
            }
        }
    }

    /// What the sender remembers across connections.
    struct ResumeState: Sendable {
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
    struct ConnectEpisode: Sendable {
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
        let machine = makeReconnectMachine()
        state.withLock { $0.beginFirstEpisode(machine, resume) }
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
        let delay = state.withLock { $0.stopRequested } ? .zero : delay
        let ticket = ConnectionWorkers.shared.run(after: delay) { self.attempt() }
        state.withLock { $0.attemptScheduled(ticket) }
    }

    /// One attempt, on a connection worker.
    private func attempt() {
        guard state.withLock({ $0.attemptStarts() }) else { return finishAfterStop() }
        do {
            let connection = try connect(state.withLock { $0.attemptInfo(default: info) })
            // Never nil: only an attempt ends its episode, and this one runs.
            guard let episode = state.withLock({ $0.attemptPublished() }) else { return }
            signal(episode.isFirst ? .published(url: connection.url.redacted) : .reconnected(url: connection.url.redacted))
            publish(connection, episode.resume)
        } catch {
            let now = clock.now().microseconds
            let retries = config.retriesFirstConnect
            guard let (decision, isFirst) = state.withLock({ $0.attemptFailed(error, retriesFirstConnect: retries, now: now) }) else {
                return
            }
            follow(decision, after: error, isFirst: isFirst)
        }
    }

    /// Carries out what the ``ReconnectStateMachine`` decided after `error`.
    private func follow(_ decision: ReconnectStateMachine.Decision, after error: LivePushError?, isFirst: Bool) {
        switch decision {
        case .giveUp(let cause) where isFirst:
            state.withLock { $0.firstConnectGaveUp() }
            signal(.connectFailed(cause))
        case .giveUp(let cause):
            let stopped = state.withLock { $0.reconnectGaveUp() }
            signal(.reconnectFailed(cause))
            // A stop asked for meanwhile found no attempt waiting: it ends the episode now.
            if stopped { schedule(after: .zero) }
        case .retry(let attempt, let delay):
            if !isFirst { announceReconnect(attempt: attempt) }
            if let error { signal(.retryScheduled(attempt: attempt, delay: delay, cause: error)) }
            schedule(after: delay)
        case .awaitStaleSession(let attempt, let waited, let delay):
            signal(.staleSession(attempt: attempt, waited: waited, retryIn: delay))
            schedule(after: delay)
        }
    }

    /// A reconnect attempt begins: counted in the output's figures, then reported.
    private func announceReconnect(attempt: Int) {
        state.withLock { $0.reconnectsBegun += 1 }
        signal(.reconnecting(attempt: attempt))
    }

    /// While the output connects, a stop or a reconnect request runs the waiting attempt now;
    /// an episode that gave up starts again (a reconnect) or ends (a stop). False when no
    /// episode runs: the output publishes, and its pump ends on the request.
    func resumeEpisode(reconnect: Bool) -> Bool {
        switch state.withLock({ $0.resumeEpisode(reconnect: reconnect) }) {
        case nil:
            return false
        case .runNow(let ticket):
            ConnectionWorkers.shared.runNow(ticket)
        case .restart(let announcesReconnect):
            if announcesReconnect { announceReconnect(attempt: 1) }
            schedule(after: .zero)
        case .wait:
            break
        }
        return true
    }

    /// Hands a published connection to a send loop, the stream header first.
    func publish(_ connection: sending Connected, _ resume: ResumeState) {
        let loop = SendLoop.next()
        let headerTime = state.withLock { $0.attach(to: loop, shift: resume.shift, lastSentDTS: resume.lastSentDTS) }
        let publishing: any PublishingTurns = switch connection {
        case .rtmp(let session):
            publishing(session, resume, headerTime: headerTime)
        case .srt(let session, let muxer):
            Publishing(output: self, connection: SRTConnection(session: session, muxer: muxer),
                       resume: resume, headerTime: headerTime)
        case .whip(let connection, _):
            Publishing(output: self, connection: connection, resume: resume, headerTime: headerTime)
        case .hls(let connection, _):
            Publishing(output: self, connection: connection, resume: resume, headerTime: headerTime)
        }
        loop.attach(PublishingSlot(publishing, for: self))
    }

    /// An RTMP connection's publishing, after what its server answered is reported: its
    /// capabilities (when it said any: a legacy server's silence is no event), and what the
    /// output goes on without (once per connection).
    private func publishing(_ session: RTMPSession, _ resume: ResumeState, headerTime: Int64) -> any PublishingTurns {
        let connection = RTMPConnection(session: session, info: resume.info, multitrack: config.rtmpMultitrack)
        if let answer = session.serverCapabilities { signal(.serverCapabilities(ServerCapabilities(answer))) }
        for warning in connection.plan.warnings { signal(.warning(warning)) }
        return Publishing(output: self, connection: connection, resume: resume, headerTime: headerTime)
    }

    /// Called by the send loop when a connection's pump ended. A graceful close waits for the
    /// server to close its side (``RTMPSession/close(graceful:lingering:)``), so it is done by a
    /// worker (``ConnectionWorkers/closing``), like a reconnect: the loop never blocks. The
    /// worker takes the connection out of its slot: from then on it is the worker's alone.
    func pumpEnded(_ outcome: PumpOutcome, _ ended: PublishingSlot) {
        if case .switchover = outcome { return switchOver(from: ended) }
        let successor = state.withLock { state in
            state.detach()
            return state.pumpEndedBeforeSwitch()
        }
        if let successor {
            ConnectionWorkers.closing.run { successor.take()?.close(graceful: true) }
        }
        switch outcome {
        case .drained, .stopped:
            ConnectionWorkers.closing.run {
                ended.take()?.close(graceful: true, drained: outcome.isDrained)
                self.hls?.finish(limit: Self.hlsFinishLimit)
                self.signal(.finished)
            }
        case .reconnectRequested:
            ConnectionWorkers.shared.run {
                guard let publishing = ended.take() else { return }
                publishing.close(graceful: true, drained: false)
                self.signal(.reconnectRequested)
                self.beginReconnecting(after: nil, publishing.resume)
            }
        case .lost(let error):
            // Heard at once; the close runs on a worker too: a WHIP session's close is an HTTP
            // DELETE (DNS, connect, TLS), which must not hold the loop and every output on it.
            signal(.connectionLost(error))
            ConnectionWorkers.closing.run {
                guard let publishing = ended.take() else { return }
                publishing.close(graceful: false, drained: false)
                self.beginReconnecting(after: error, publishing.resume)
            }
        case .switchover:
            break  // above
        }
    }

    /// Starts reconnecting after a lost connection (`error`) or a requested reconnect (nil).
    func beginReconnecting(after error: LivePushError?, _ resume: ResumeState) {
        let machine = makeReconnectMachine()
        // What is sent again follows the last timestamp sent by one frame.
        let step = info.video.map { $0.frameRate > 0 ? Int64(1_000_000 / $0.frameRate) : 40_000 } ?? 23_000
        let decision = state.withLock {
            $0.beginReconnecting(after: error, machine: machine, resume: resume, frameStep: step)
        }
        follow(decision, after: error, isFirst: false)
    }

    private func finishAfterStop() {
        state.withLock { $0.finishAfterStop() }
        hls?.finish(limit: Self.hlsFinishLimit)
        signal(.finished)
    }

    /// How long an HLS output's end waits for its last segment and final playlist to be stored.
    static let hlsFinishLimit: Duration = .seconds(10)

    /// A connection made, before it publishes.
    enum Connected {
        case rtmp(RTMPSession)
        /// With the muxer for its stream, made before connecting: a stream MPEG-TS cannot carry
        /// fails the connect rather than the publish.
        case srt(SRTSession, TSMuxer)
        /// Offered, answered and connected (ICE and DTLS).
        case whip(WHIPConnection, PushURL)
        /// Its store takes writes, and the write that failed last, if any, went.
        case hls(HLSConnection, PushURL)

        var url: PushURL {
            switch self {
            case .rtmp(let session): session.url
            case .srt(let session, _): session.url
            case .whip(_, let url), .hls(_, let url): url
            }
        }
    }

    private func connect(_ info: StreamInfo) throws(LivePushError) -> Connected {
        let url = state.withLock { $0.url }
        if let hls {
            try hls.reopen()
            let stream = try hls.takeStream(for: info)
            return .hls(HLSConnection(writer: hls, stream: stream), url)
        }
        if url.isWHIP { return .whip(try connectWHIP(url, info), url) }
        if url.scheme == .srt {
            let muxer = try TSMuxer.make(for: info, output: "an srt:// output")
            let options = SRTSession.Options(connectTimeout: config.connectTimeout, peerIdleTimeout: config.sendDataTimeout)
            return .srt(try SRTSession(url: url, options: options), muxer)
        }
        return .rtmp(try connectRTMP(url, info))
    }

    /// Connects and publishes an RTMP session at `url` (the output's, or where a server's
    /// reconnect request moves it).
    func connectRTMP(_ url: PushURL, _ info: StreamInfo) throws(LivePushError) -> RTMPSession {
        let options = RTMPSession.Options(connectTimeout: config.connectTimeout, receiveTimeout: config.responseTimeout,
                                          sendTimeout: config.sendDataTimeout, chunkSize: Int32(config.chunkSize),
                                          sendBufferBytes: config.socketSendBufferBytes, tls: config.tls,
                                          acknowledgementWindow: keepsHistory ? Self.acknowledgementWindow : nil,
                                          fourCcList: RTMPTrackPlan.announced(info))
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
        return session
    }

    /// How often the server is asked to acknowledge what it read, in `--fast` mode.
    static let acknowledgementWindow: UInt32 = 256 * 1024

    /// Bytes assumed in flight before a server's first acknowledgement: our send buffer (the
    /// kernel doubles what `SO_SNDBUF` asks for) plus the server's receive buffer, which Linux
    /// grows up to 6 MiB by default (`tcp_rmem`).
    private var fallbackUnconfirmedWindow: Int64 {
        Int64(2 * (config.socketSendBufferBytes ?? 2 * 1024 * 1024) + 8 * 1024 * 1024)
    }
}
