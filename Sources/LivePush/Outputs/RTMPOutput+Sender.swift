/// Connecting and reconnecting: blocking librtmp calls, on a thread (`livepush.conn`) that
/// lives only while the output connects. Once published, the connection goes to a
/// ``SendLoop`` (``Publishing``); when its pump ends, the loop hands it back here.
///
/// After a reconnect the server gets the stream header again (metadata, sequence headers)
/// and the stream resumes on a keyframe with timestamps that continue where they stopped:
/// - real time: from the first keyframe in the queue (what the outage cost beyond the queue
///   is lost, as it would be for a live camera);
/// - `--fast`: what may not have reached the server is sent again, from the keyframe before
///   it, re-stamped to follow the last timestamp sent, so no frame is lost (the server may see
///   some frames twice). What reached it is what it acknowledged (``ResendHistory``).
extension RTMPOutput {
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
        /// Follows the codec configuration across connections (sequence headers).
        var packetizer: FLVPacketizer
        /// Output dts of the last packet sent.
        var lastSentDTS: Int64 = 0
        /// In `--fast` mode: what the server has not acknowledged yet, from a keyframe on.
        var history: ResendHistory
        var firstFrameSent = false
    }

    func runFirstConnect() {
        let connection: RTMPSession
        do {
            connection = try connect()
        } catch {
            lock.withLock { stopRequested = true }
            signal(.connectFailed(error))
            return
        }
        lock.withLock {
            connected = true
            lock.broadcast()
        }
        signal(.published(url: connection.url.redacted))
        let resume = ResumeState(packetizer: FLVPacketizer(info: info),
                                 history: ResendHistory(limits: .init(fallbackWindow: fallbackUnconfirmedWindow),
                                                        hasVideo: info.video != nil))
        publish(connection, resume)
    }

    /// Hands a published connection to a send loop, the stream header first.
    private func publish(_ connection: RTMPSession, _ resume: ResumeState) {
        let headerTime = lock.withLock { queue.items.first.map { $0.dts + resume.shift } } ?? resume.lastSentDTS
        let header = resume.packetizer.header(timestampMs: UInt32(clamping: max(0, headerTime) / 1000))
        let loop = SendLoop.next()
        lock.withLock { self.loop = loop }
        loop.attach(Publishing(output: self, connection: connection, resume: resume, header: header))
    }

    /// Called by the send loop when a connection's pump ended. A graceful close waits for the
    /// server to close its side (``RTMPSession/close(graceful:lingering:)``), so it is done on a
    /// thread of its own, like a reconnect: the loop never blocks.
    func pumpEnded(_ outcome: PumpOutcome, _ publishing: Publishing) {
        lock.withLock { loop = nil }
        let ended = UncheckedTransfer(value: publishing)
        switch outcome {
        case .drained, .stopped:
            WorkerThread.start(name: "livepush.close") {
                ended.value.close(graceful: true, drained: outcome.isDrained)
                self.signal(.finished)
            }
        case .reconnectRequested:
            WorkerThread.start(name: "livepush.conn") {
                ended.value.close(graceful: true)
                self.signal(.reconnectRequested)
                self.reconnectAndPublish(after: nil, ended.value.resume)
            }
        case .lost(let error):
            publishing.close(graceful: false)
            signal(.connectionLost(error))
            WorkerThread.start(name: "livepush.conn") { self.reconnectAndPublish(after: error, ended.value.resume) }
        }
    }

    private func reconnectAndPublish(after error: LivePushError?, _ resume: ResumeState) {
        var resume = resume
        guard let connection = reconnect(after: error, &resume) else { return finishAfterStop() }
        publish(connection, resume)
    }

    private func finishAfterStop() {
        lock.withLock { stopRequested = true }
        signal(.finished)
    }

    private func connect() throws(LivePushError) -> RTMPSession {
        let options = RTMPSession.Options(connectTimeout: config.connectTimeout, receiveTimeout: config.responseTimeout,
                                          sendTimeout: config.sendDataTimeout, chunkSize: Int32(config.chunkSize),
                                          sendBufferBytes: config.socketSendBufferBytes, tls: config.tls,
                                          acknowledgementWindow: queue.mode == .backpressure ? Self.acknowledgementWindow : nil)
        let session = try RTMPSession(url: lock.withLock { url }, options: options)
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

    /// Reconnects as ``ReconnectStateMachine`` decides; when it gives up, reports
    /// `reconnectFailed` and waits for `reconnect()` or `stop()`. Nil when the push was stopped.
    private func reconnect(after error: LivePushError?, _ resume: inout ResumeState) -> RTMPSession? {
        var machine = ReconnectStateMachine(
            policy: ReconnectPolicy(maxAttempts: config.connectRetryCount, interval: config.connectRetryInterval,
                                    backoff: config.connectRetryBackoff),
            stale: .init(grace: config.staleSessionGrace,
                         initialInterval: max(.milliseconds(250), min(config.connectRetryInterval, config.staleSessionMaxInterval)),
                         maxInterval: config.staleSessionMaxInterval))
        lock.withLock {
            reconnectRequested = false
            connected = false
            queue.isDisconnected = true
            prepareResume(&resume)
        }
        defer { lock.withLock { queue.isDisconnected = false } }
        var decision = machine.begin(after: error)
        while true {
            switch decision {
            case .giveUp(let cause):
                signal(.reconnectFailed(cause))
                guard waitForManualReconnect() else { return nil }
                decision = machine.begin(after: nil)
                continue
            case .retry(let attempt, let delay):
                signal(.reconnecting(attempt: attempt))
                guard sleep(delay) else { return nil }
            case .awaitStaleSession(let attempt, let waited, let delay):
                signal(.staleSession(attempt: attempt, waited: waited, retryIn: delay))
                guard sleep(delay) else { return nil }
            }
            do {
                let connection = try connect()
                lock.withLock { connected = true }
                signal(.reconnected(url: connection.url.redacted))
                return connection
            } catch {
                decision = machine.attemptFailed(error, now: monotonicMicroseconds())
            }
        }
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

    /// Waits `delay`; false when the push was stopped meanwhile. A reconnect request cuts it short.
    private func sleep(_ delay: Duration) -> Bool {
        let deadline = monotonicMicroseconds() + delay.nanoseconds / 1000
        return lock.withLock {
            while !stopRequested && !reconnectRequested {
                let left = deadline - monotonicMicroseconds()
                if left <= 0 { break }
                lock.wait(timeout: .microseconds(left))
            }
            reconnectRequested = false
            return !stopRequested
        }
    }

    private func waitForManualReconnect() -> Bool {
        lock.withLock {
            while !stopRequested && !reconnectRequested { lock.wait() }
            return !stopRequested
        }
    }
}
