import DequeModule

/// What a ``SendLoop`` holds of a published connection, whatever its kind.
protocol PublishingTurns: AnyObject {
    /// What the output carries over to its next connection.
    var resume: PushOutput.ResumeState { get }
    func runTurn(now: Int64) -> PublishingTurn
    func close(graceful: Bool, drained: Bool)
}

/// How much a turn may do, for every kind of connection.
enum PublishingPace {
    /// Bytes one turn may write before the loop goes on to the other outputs.
    static let turnBytes: Int64 = 256 * 1024
    /// How often the server's messages are read (acknowledgements, pings, errors, a close), at
    /// the turns of a connection that sends.
    static let serviceInterval: Int64 = 100_000
    /// How late a connection with nothing to send (paused, or between real-time batches) reads
    /// its server, at the latest: its own due turn. Longer than a batch (``PacingGate/batch``),
    /// so that a connection that sends is read at its turns and this never falls due for it;
    /// each due turn is a wake-up of the loop.
    static let idleServiceInterval: Int64 = 250_000
    /// How soon a write the socket had no room for is tried again.
    static let blockedRetry: Int64 = 5_000
}

/// What a turn ends in, and when the connection needs its next turn without new work: the
/// loop keeps that due time (``DueTimes``), and an output that gets work wakes it sooner.
enum PublishingTurn: Sendable {
    /// The queue is empty (or the output paused): run again when the output wakes the loop,
    /// or at `readBy` (monotonic µs) to read what the server sent.
    case idle(readBy: Int64)
    /// The socket has no room for the next message: run again at `retryAt`.
    case blocked(retryAt: Int64)
    /// This turn sent its share; others' turns come first, then this one's again.
    case yielded
    case ended(PushOutput.PumpOutcome)
}

/// One output's published connection while a ``SendLoop`` serves it: sends what the output's
/// queue holds, as far as the transport takes it without blocking, and says what it waits for.
///
/// The stream header goes out first on every connection (metadata, sequence headers; program
/// tables), then the queue's packets, each stamped with the output's resume shift. A packet that
/// does not fit waits in `outbox` until the transport has drained; a transport that takes nothing
/// for the send timeout is a `sendDataTimeout`, as a blocked write would have been.
final class Publishing<Connection: OutputConnection>: PublishingTurns {
    typealias Turn = PublishingTurn

    let output: PushOutput
    let connection: Connection
    var resume: PushOutput.ResumeState
    private let keepsHistory: Bool
    /// Messages built and waiting for room.
    private var outbox: Deque<Outgoing> = []
    /// The packet sent last, counted in the output's figures when the next is taken.
    private var sent: SentPacket?
    /// Since when the socket has taken nothing, and what it held then.
    private var blockedSince: (time: Int64, queued: Int64)?
    private var lastServiced: (time: Int64, bytes: Int64)

    init(output: PushOutput, connection: Connection, resume: PushOutput.ResumeState, headerTime: Int64) {
        self.output = output
        self.connection = connection
        self.resume = resume
        keepsHistory = output.keepsHistory
        outbox = Deque(connection.header(at: headerTime).map { Outgoing(message: $0, packet: nil) })
        lastServiced = (output.clock.now().microseconds, connection.bytesSent)
    }

    /// Sends what the queue holds, as far as the socket takes it. The turn's messages are
    /// framed into one buffer and written together when it ends (``OutputConnection/flush()``):
    /// one system call per turn rather than one per frame. What the socket does not take stays
    /// in that buffer and goes first next turn; the stream's end waits until it is written.
    func runTurn(now: Int64) -> Turn {
        do {
            // A stop or reconnect ends the pump even while the socket takes nothing; with
            // nothing waiting, taking the next packet says so (in the lock it takes anyway).
            if !outbox.isEmpty || connection.hasUnwrittenBytes, let end = output.requestedEnd() {
                output.recordSent(sent)
                return .ended(end)
            }
            guard try connection.flush() else { return blocked(now: now) }
            let turn = try fill(now: now)
            if try connection.flush() { return turn }
            if case .ended(let outcome) = turn, !outcome.endsFlushed { return turn }
            return blocked(now: now)
        } catch {
            output.recordSent(sent)
            return .ended(.lost(error))
        }
    }

    private func fill(now: Int64) throws(LivePushError) -> Turn {
        let turnStart = connection.bytesSent
        while true {
            if outbox.isEmpty {
                switch output.takePacket(afterSending: sent) {
                case .ended(let outcome):
                    sent = nil
                    return .ended(outcome)
                case .none:
                    sent = nil
                    try serviceIncoming(now: now)
                    return .idle(readBy: lastServiced.time + PublishingPace.idleServiceInterval)
                case .packet(let packet):
                    sent = nil
                    guard connection.carries(packet) else { continue }
                    outbox.append(build(packet))
                }
            }
            let (message, packet) = (outbox[0].message, outbox[0].packet)
            guard connection.hasRoom(for: connection.wireBytes(of: message)) else {
                try serviceIncoming(now: now)
                return blocked(now: now)
            }
            blockedSince = nil
            try connection.send(message)
            outbox.removeFirst()
            if let packet {
                resume.lastSentDTS = max(resume.lastSentDTS, packet.dts)
                sent = packet
                if !resume.firstFrameSent {
                    resume.firstFrameSent = true
                    output.signal(.firstFrameSent)
                }
            }
            try serviceIncoming(now: now)
            if connection.bytesSent - turnStart >= PublishingPace.turnBytes { return .yielded }
        }
    }

    /// The socket takes nothing more now. Stalled is no progress at all, as for a blocked write:
    /// a socket that drains, however slowly, is a slow network (congestion), not a dead one.
    private func blocked(now: Int64) -> Turn {
        let queued = connection.transportBacklog
        let stall = blockedSince.flatMap { queued < $0.queued ? nil : $0 } ?? (time: now, queued: queued)
        blockedSince = stall
        guard now - stall.time >= output.config.sendDataTimeout.nanoseconds / 1000 else {
            return .blocked(retryAt: now + PublishingPace.blockedRetry)
        }
        output.recordSent(sent)
        sent = nil
        return .ended(.lost(LivePushError(.sendDataTimeout,
            "no data could be written for \(output.config.sendDataTimeout.milliseconds) ms")))
    }

    /// Stamps a packet with the resume shift and makes its message; in `--fast` mode it goes
    /// into the history before it is written, so that a failed write sends it again.
    private func build(_ packet: MediaPacket) -> Outgoing {
        var out = packet
        out.dts += resume.shift
        out.pts += resume.shift
        if packet.isSequenceHeader { resume.info.adopt(sequenceHeader: packet) }
        let message = connection.message(for: out)
        if keepsHistory { resume.history.record(packet, end: connection.bytesSent + connection.wireBytes(of: message)) }
        return Outgoing(message: message, packet: SentPacket(out, bytes: connection.bodyBytes(of: message)))
    }

    /// A message built and waiting for room, with what to count of the packet it carries (nil:
    /// the stream header).
    private struct Outgoing {
        let message: Connection.Message
        let packet: SentPacket?
    }

    /// Every 100 ms, and in `--fast` mode also every acknowledgement window, so that the
    /// history is cut as the server's acknowledgements come in.
    private func serviceIncoming(now: Int64) throws(LivePushError) {
        guard now - lastServiced.time >= PublishingPace.serviceInterval
                || (keepsHistory && connection.bytesSent - lastServiced.bytes >= Int64(PushOutput.acknowledgementWindow)) else {
            return
        }
        lastServiced = (now, connection.bytesSent)
        if let acknowledged = try connection.serviceIncoming() {
            resume.history.acknowledge(sequenceNumber: acknowledged)
        }
        if let report = connection.takeLinkReport() { output.record(report) }
    }

    /// Ends the connection. A graceful close (FCUnpublish, deleteStream) is a few small writes,
    /// made only when the socket has room for them: a stalled socket would hold the closing
    /// thread for the send timeout, and the server could not read them anyway.
    ///
    /// `drained`: the stream ended after the socket took all of it, so the socket is not stalled
    /// but may still be full (a `--fast` push keeps it full). Then the close waits, at most for
    /// the send timeout, until it drains: closed without the commands, with the server's latest
    /// acknowledgements unread, the kernel would reset the connection, and the server would drop
    /// the end of the stream it had not read yet.
    func close(graceful: Bool, drained: Bool = false) {
        if graceful && drained {
            for message in connection.trailer(at: resume.lastSentDTS) where connection.hasRoom(for: connection.wireBytes(of: message)) {
                try? connection.send(message)
            }
            _ = try? connection.flush()
            let deadline = output.clock.now().microseconds + output.config.sendDataTimeout.nanoseconds / 1000
            while !connection.hasRoom(for: 1024) && output.clock.now().microseconds < deadline {
                connection.waitUntilWritable(timeout: .milliseconds(20))
            }
        }
        connection.close(graceful: graceful && connection.hasRoom(for: 1024))
    }
}
