import NIOCore

/// One caller of an ``SRTRelay``: its address, its own UDP socket toward the listener, its
/// figures, and which faults are due. It decides, datagram by datagram, what is forwarded; the
/// ``SRTRelayHub`` does the I/O. Confined to the relay's event loop.
final class SRTRelaySession {
    struct RuleState {
        var rule: SRTFaultRule
        var injected = false
        /// A stall: when it ends, and whether that was reported.
        var stallEnd: NIODeadline?
        var stallOver = false
    }

    let number: Int
    let caller: SocketAddress
    /// The caller's SRT socket id, from its first handshake.
    let callerSocketID: UInt32?
    let started: NIODeadline
    let relayStarted: NIODeadline
    var rules: [RuleState]
    var figures = SRTRelayFigures()
    var lastActivity: NIODeadline
    /// The caller sent something other than a handshake: its connection is up.
    var established = false

    /// The socket toward the listener, once bound; datagrams wait in `pending` until then.
    var upstream: (any Channel)?
    var pending: [ByteBuffer] = []
    var ended = false

    private var random = SystemRandomNumberGenerator()

    init(number: Int, caller: SocketAddress, callerSocketID: UInt32?, rules: [SRTFaultRule],
         relayStarted: NIODeadline, now: NIODeadline = .now()) {
        self.number = number
        self.caller = caller
        self.callerSocketID = callerSocketID
        self.relayStarted = relayStarted
        started = now
        lastActivity = now
        self.rules = rules.filter { $0.trigger.matches(connection: number) }.map { RuleState(rule: $0) }
    }

    /// Whether a datagram from the caller (`fromCaller`) or the listener goes through, and the
    /// events of the faults it set off.
    func admit(_ packet: SRTPacket, fromCaller: Bool, now: NIODeadline = .now()) -> (forward: Bool, events: [SRTRelayEvent]) {
        lastActivity = now
        if fromCaller {
            figures.packetsFromCaller += 1
            if packet.isData { figures.dataPacketsFromCaller += 1 }
            if !packet.isHandshake, packet.kind != .runt { established = true }
        } else {
            figures.packetsFromListener += 1
        }
        var forward = true
        var events: [SRTRelayEvent] = []
        for index in rules.indices {
            let rule = rules[index].rule
            guard rules[index].injected || isDue(rule.trigger, now: now) else { continue }
            var applies = true
            switch rule.fault {
            case .refuse:
                applies = fromCaller && packet.isHandshake
                if applies { forward = false }
            case .drop:
                forward = false
            case .stall(let length):
                let end = rules[index].stallEnd ?? now + .nanoseconds(length.totalNanoseconds)
                rules[index].stallEnd = end
                if now < end {
                    forward = false
                } else if !rules[index].stallOver {
                    rules[index].stallOver = true
                    events.append(.stallEnded(rule, session: number))
                }
            case .loss(let percent):
                applies = packet.isData
                if applies, Double.random(in: 0..<100, using: &random) < percent { forward = false }
            }
            if applies, !rules[index].injected {
                rules[index].injected = true
                events.insert(.faultInjected(rule, session: number), at: 0)
            }
        }
        if !forward { figures.packetsDropped += 1 }
        return (forward, events)
    }

    private func isDue(_ trigger: FaultTrigger, now: NIODeadline) -> Bool {
        trigger.isDue(connection: number, sinceConnectionStart: .nanoseconds((now - started).nanoseconds),
                      sinceLoopbackStart: .nanoseconds((now - relayStarted).nanoseconds),
                      messages: figures.dataPacketsFromCaller)
    }
}
