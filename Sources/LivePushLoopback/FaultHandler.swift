#if canImport(Glibc)
import Glibc
#endif
import LivePushWire
import NIOCore

/// The first handler of every client pipeline: counts client→server bytes and RTMP messages,
/// decides when each ``FaultRule`` is due and applies the TCP-level faults (reset, stall,
/// throttle, latency, close during handshake). RTMP-level faults are handed to
/// ``RTMPSessionHandler`` through ``SessionFaultHooks``.
///
/// It owns the client channel's reads: `read()` requests from the rest of the pipeline are held
/// back while stalled, while throttled bytes are queued, or while delayed bytes pile up.
final class FaultHandler: ChannelDuplexHandler, SessionFaultHooks {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Bytes of the RTMP handshake the client sends (C0 + C1 + C2) before its chunk stream.
    static let clientHandshakeSize = 1 + 1536 + 1536
    /// Throttle tick.
    static let tick = TimeAmount.milliseconds(100)
    /// Delayed (latency) bytes queued before reads are held back.
    static let maxQueuedBytes = 4 * 1024 * 1024

    struct RuleState {
        var rule: FaultRule
        var injected = false
    }

    enum FirstReadAction {
        case reset(FaultRule)
        case close(FaultRule)
    }

    struct Delayed {
        var buffer: ByteBuffer
        var due: NIODeadline
    }

    struct DelayedWrite {
        var buffer: ByteBuffer
        var promise: EventLoopPromise<Void>?
        var due: NIODeadline
    }

    let connection: Int
    let core: LoopbackCore
    let loopbackStart: NIODeadline
    var connectionStart = NIODeadline.now()
    var rules: [RuleState]
    var context: ChannelHandlerContext?
    var acceptEvaluated = false
    var finished = false

    // Counters.
    var bytesIn = 0
    var messages = 0
    var handshakeRemaining = FaultHandler.clientHandshakeSize
    var decoder = RTMPChunkDecoder()
    var decoding = true
    /// The client has sent `publish` (a reconnect request waits for it).
    var clientPublished = false

    // Server → client, read only when a `reconnect-request` rule concerns the connection: where
    // its messages end, so that the request goes between two of them.
    var outboundHandshakeRemaining = FaultHandler.serverHandshakeSize
    var outboundDecoder: RTMPChunkDecoder?
    /// A due `reconnect-request` rule, until it is sent.
    var pendingReconnectRequest: FaultRule?

    // Effects.
    var stalled = false
    var blackholed = false
    var serverHoldsPublishes: Duration??
    var throttleRate: Int?
    var latency = TimeAmount.zero
    var resetAtBytes: (limit: Int, rule: FaultRule)?
    var resetTimers: [(rule: FaultRule, task: Scheduled<Void>)] = []
    var firstReadAction: FirstReadAction?
    var truncateRule: FaultRule?

    // Queues and timers.
    var inbound = CircularBuffer<Delayed>()
    var inboundBytes = 0
    var outbound = CircularBuffer<DelayedWrite>()
    var pendingRead = false
    var budget = 0.0
    var throttleTask: Scheduled<Void>?
    var inboundTimer: (task: Scheduled<Void>, at: NIODeadline)?
    var outboundTimer: (task: Scheduled<Void>, at: NIODeadline)?
    var triggerTimer: Scheduled<Void>?

    init(connection: Int, core: LoopbackCore, rules: [FaultRule]) {
        self.connection = connection
        self.core = core
        self.loopbackStart = core.startTime
        self.rules = rules.map { RuleState(rule: $0) }
        outboundDecoder = Self.outboundDecoder(for: rules, connection: connection)
    }

    /// True when a rule will end this connection before any RTMP is exchanged (refuse, or
    /// reset / close-handshake due at accept), so a relay need not contact the upstream.
    var endsBeforeRTMP: Bool {
        rules.contains { state in
            let due = state.rule.trigger.isDue(connection: connection, sinceConnectionStart: .zero,
                                               sinceLoopbackStart: elapsed(since: loopbackStart), messages: 0)
            switch state.rule.fault {
            case .refuse, .reset, .closeDuringHandshake, .resetAfterBytes(0): return due
            default: return false
            }
        }
    }

    /// True when an RTMP-level rule concerns this connection (it must then be terminated locally).
    var hasRTMPLevelRules: Bool {
        rules.contains { $0.rule.fault.isRTMPLevel && $0.rule.trigger.matches(connection: connection) }
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        connectionStart = .now()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        evaluate()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The pipeline is torn down right after this event.
        deliverHeldBytesAtEnd(context)
        finished = true
        cancelTimers()
        while let write = outbound.popFirst() { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        inbound.removeAll()
        inboundBytes = 0
        let reason = core.takeCloseReason(connection: connection) ?? "client closed"
        core.emit(.closed(connection: connection, reason: reason))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        core.noteCloseReason(connection: connection, "error: \(error)")
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is FaultRulesChanged {
            rulesChanged(core.rules)
            return
        }
        if case ChannelEvent.inputClosed = event {
            // A relay's client sent its FIN (only relays allow half-closure). A stalled path
            // never carries it: the connection ends as a full close would end it.
            guard !stalled else { return context.close(promise: nil) }
            deliverHeldBytesAtEnd(context)
            core.emit(.clientFinishedSending(connection: connection))
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The client ended its side (NIO has read everything up to the EOF), but bytes it sent may
    /// still be held back by a throttle or latency. They were sent before the end, so they are
    /// delivered now, at once.
    func deliverHeldBytesAtEnd(_ context: ChannelHandlerContext) {
        guard !finished && !stalled && !inbound.isEmpty else { return }
        while let delayed = inbound.popFirst() {
            context.fireChannelRead(wrapInboundOut(delayed.buffer))
        }
        inboundBytes = 0
        context.fireChannelReadComplete()
    }

    func cancelTimers() {
        throttleTask?.cancel(); throttleTask = nil
        inboundTimer?.task.cancel(); inboundTimer = nil
        outboundTimer?.task.cancel(); outboundTimer = nil
        triggerTimer?.cancel(); triggerTimer = nil
        for timer in resetTimers { timer.task.cancel() }
        resetTimers = []
    }

    // MARK: Rules

    func rulesChanged(_ newRules: [FaultRule]) {
        var old = rules
        rules = newRules.map { rule in
            if let i = old.firstIndex(where: { $0.rule == rule }) {
                return old.remove(at: i)
            }
            return RuleState(rule: rule)
        }
        if let pending = resetAtBytes, !newRules.contains(pending.rule) { resetAtBytes = nil }
        resetTimers.removeAll { timer in
            if newRules.contains(timer.rule) { return false }
            timer.task.cancel()
            return true
        }
        if case .reset(let rule)? = firstReadAction, !newRules.contains(rule) { firstReadAction = nil }
        if case .close(let rule)? = firstReadAction, !newRules.contains(rule) { firstReadAction = nil }
        evaluate()
    }

    func elapsed(since start: NIODeadline) -> Duration {
        .nanoseconds((NIODeadline.now() - start).nanoseconds)
    }

    func isDue(_ trigger: FaultTrigger) -> Bool {
        trigger.isDue(connection: connection, sinceConnectionStart: elapsed(since: connectionStart),
                      sinceLoopbackStart: elapsed(since: loopbackStart), messages: messages)
    }

    /// Injects every TCP-level rule that has become due, updates the continuous effects, re-arms
    /// the trigger timer and moves queued bytes along.
    func evaluate() {
        guard context != nil, !finished else { return }
        let atAccept = !acceptEvaluated
        acceptEvaluated = true
        // Refusals first: a refused connection gets no other fault.
        let order = rules.indices.sorted { (rules[$0].rule.fault == .refuse ? 0 : 1) < (rules[$1].rule.fault == .refuse ? 0 : 1) }
        for i in order where !rules[i].injected {
            let rule = rules[i].rule
            guard !rule.fault.isRTMPLevel, rule.trigger.matches(connection: connection) else { continue }
            if rule.fault == .refuse {
                // Only ever decided on accept.
                rules[i].injected = true
                if atAccept && isDue(rule.trigger) {
                    reset(rule, reason: "refused by fault \(rule)")
                    return
                }
                continue
            }
            guard isDue(rule.trigger) else { continue }
            rules[i].injected = true
            apply(rule)
            if finished { return }
        }
        updateEffects()
        armTriggerTimer()
        drainInbound()
        drainOutbound()
    }

    func apply(_ rule: FaultRule) {
        switch rule.fault {
        case .refuse:
            break
        case .reset:
            if bytesIn == 0 {
                firstReadAction = .reset(rule)
            } else {
                reset(rule, reason: "reset by fault \(rule)")
            }
        case .resetAfterBytes(let n):
            if n <= 0 {
                if bytesIn == 0 { firstReadAction = .reset(rule) } else { reset(rule, reason: "reset by fault \(rule)") }
            } else {
                resetAtBytes = (bytesIn + n, rule)
            }
        case .resetAfter(let d):
            guard let context else { return }
            let task = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(d.totalNanoseconds)) { [self] in
                resetTimers.removeAll { $0.rule == rule }
                reset(rule, reason: "reset by fault \(rule)")
            }
            resetTimers.append((rule, task))
        case .closeDuringHandshake:
            guard handshakeRemaining > 0 else { return }  // too late for this connection
            if bytesIn == 0 {
                firstReadAction = .close(rule)
            } else {
                closeNow(rule)
            }
        case .stale(let hold):
            serverHoldsPublishes = .some(hold)
            context?.fireUserInboundEventTriggered(UpstreamOnClientClose.keepOpen(for: hold))
            if bytesIn == 0 {
                firstReadAction = .reset(rule)
            } else {
                reset(rule, reason: "reset by fault \(rule); the upstream side stays open")
            }
        case .blackhole:
            serverHoldsPublishes = .some(nil)
            context?.fireUserInboundEventTriggered(UpstreamOnClientClose.keepOpen(for: nil))
            core.emit(.faultInjected(rule, connection: connection))
        case .stall, .throttle, .latency:
            core.emit(.faultInjected(rule, connection: connection))
        case .reconnectRequest:
            pendingReconnectRequest = rule
            sendReconnectRequestIfReady()
        case .rejectConnect, .rejectPublish, .closeAfterPublish, .malformedReply, .truncatedReply:
            break
        }
    }

    /// Stall, throttle and latency follow the injected rules that are still configured.
    func updateEffects() {
        let active = rules.filter(\.injected).map(\.rule.fault)
        let wasStalled = stalled
        let wasBlackholed = blackholed
        blackholed = active.contains(.blackhole)
        stalled = active.contains(.stall) || blackholed
        if wasBlackholed && !blackholed {
            serverHoldsPublishes = nil
            context?.fireUserInboundEventTriggered(UpstreamOnClientClose.close)
        }
        let rate = active.compactMap { fault -> Int? in if case .throttle(let r) = fault { return r } else { return nil } }.min()
        if rate != throttleRate {
            throttleRate = rate
            throttleTask?.cancel()
            throttleTask = nil
            budget = 0
            // The receive buffer is left alone: shrinking it below the loopback MSS drives the
            // client's TCP into zero-window probing with exponential backoff, which outlasts the
            // throttle itself.
            if rate != nil { scheduleThrottleTick() }
        }
        latency = active.compactMap { fault -> TimeAmount? in
            if case .latency(let d) = fault { return .nanoseconds(d.totalNanoseconds) } else { return nil }
        }.max() ?? .zero
        if wasStalled && !stalled { context?.flush() }
        // Bytes held back by a lifted stall or throttle flow again now, not at the next read.
        drainInbound()
    }

    func armTriggerTimer() {
        triggerTimer?.cancel()
        triggerTimer = nil
        guard let context else { return }
        let sinceConnection = elapsed(since: connectionStart)
        let sinceLoopback = elapsed(since: loopbackStart)
        var soonest: Duration?
        for state in rules where !state.injected && state.rule.fault != .refuse && !state.rule.fault.isRTMPLevel {
            guard state.rule.trigger.matches(connection: connection),
                  let remaining = state.rule.trigger.timeRemaining(sinceConnectionStart: sinceConnection, sinceLoopbackStart: sinceLoopback),
                  remaining > .zero else { continue }
            soonest = min(soonest ?? remaining, remaining)
        }
        guard let soonest else { return }
        triggerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(soonest.totalNanoseconds + 1_000_000)) { [self] in
            triggerTimer = nil
            evaluate()
        }
    }

    // MARK: Faults that end the connection

    func reset(_ rule: FaultRule, reason: String) {
        guard let context, !finished else { return }
        finished = true
        core.noteCloseReason(connection: connection, reason)
        core.emit(.faultInjected(rule, connection: connection))
        let channel = context.channel
        if let provider = channel as? any SocketOptionProvider {
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }

    func closeNow(_ rule: FaultRule) {
        guard let context, !finished else { return }
        finished = true
        core.noteCloseReason(connection: connection, "closed during the handshake by fault \(rule)")
        core.emit(.faultInjected(rule, connection: connection))
        context.close(promise: nil)
    }

    // MARK: SessionFaultHooks

    func takeRTMPFault(_ predicate: (Fault) -> Bool) -> FaultRule? {
        guard !finished else { return nil }
        for i in rules.indices where !rules[i].injected {
            let rule = rules[i].rule
            guard rule.fault.isRTMPLevel, predicate(rule.fault), isDue(rule.trigger) else { continue }
            rules[i].injected = true
            core.emit(.faultInjected(rule, connection: connection))
            return rule
        }
        return nil
    }

    func truncateNextWrite(rule: FaultRule) {
        truncateRule = rule
    }

    /// Records why the session handler closes the connection.
    func noteClose(_ reason: String) {
        core.noteCloseReason(connection: connection, reason)
    }
}
