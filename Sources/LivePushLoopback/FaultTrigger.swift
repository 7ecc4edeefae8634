/// When a ``FaultRule`` applies. All conditions that are set must hold; the fault is injected
/// at the first moment they all do (once per connection).
public struct FaultTrigger: Sendable, Equatable {
    /// Connection numbers (1-based, in accept order) the rule applies to; nil = every connection.
    public var connections: ClosedRange<Int>?
    /// Not before this much time has passed since ``timeOrigin``.
    public var afterTime: Duration?
    /// Not before the client has sent this many complete RTMP messages (any type, counted after
    /// the handshake, honouring the client's Set Chunk Size).
    public var afterMessages: Int?
    /// What ``afterTime`` is measured from.
    public var timeOrigin: FaultTimeOrigin

    /// Creates a trigger; every condition given must hold.
    public init(connections: ClosedRange<Int>? = nil, afterTime: Duration? = nil, afterMessages: Int? = nil,
                timeOrigin: FaultTimeOrigin = .connectionStart) {
        self.connections = connections
        self.afterTime = afterTime
        self.afterMessages = afterMessages
        self.timeOrigin = timeOrigin
    }

    /// Every connection, at once.
    public static let always = FaultTrigger()

    /// Only connection `k` (1-based).
    public static func connection(_ k: Int) -> FaultTrigger { FaultTrigger(connections: k...k) }

    /// Whether the rule concerns connection number `connection` at all.
    public func matches(connection: Int) -> Bool {
        connections?.contains(connection) ?? true
    }

    /// Whether all conditions hold for `connection` at a moment `sinceConnectionStart` after it was
    /// accepted and `sinceLoopbackStart` after the loopback started, with `messages` received.
    public func isDue(connection: Int, sinceConnectionStart: Duration, sinceLoopbackStart: Duration, messages: Int) -> Bool {
        guard matches(connection: connection) else { return false }
        if let n = afterMessages, messages < n { return false }
        if let remaining = timeRemaining(sinceConnectionStart: sinceConnectionStart, sinceLoopbackStart: sinceLoopbackStart),
           remaining > .zero {
            return false
        }
        return true
    }

    /// Time left until the time condition holds (zero once it does); nil without a time condition.
    public func timeRemaining(sinceConnectionStart: Duration, sinceLoopbackStart: Duration) -> Duration? {
        guard let afterTime else { return nil }
        let elapsed = timeOrigin == .connectionStart ? sinceConnectionStart : sinceLoopbackStart
        return elapsed >= afterTime ? .zero : afterTime - elapsed
    }

    /// The spec syntax of the conditions (`conn=1-2,after=1s`), empty for ``always``.
    public var specText: String {
        var parts: [String] = []
        if let c = connections {
            if c.lowerBound == c.upperBound {
                parts.append("conn=\(c.lowerBound)")
            } else if c.upperBound == Int.max {
                parts.append("conn=\(c.lowerBound)-")
            } else {
                parts.append("conn=\(c.lowerBound)-\(c.upperBound)")
            }
        }
        if let t = afterTime {
            parts.append((timeOrigin == .connectionStart ? "after=" : "at=") + FaultSpec.format(t))
        }
        if let n = afterMessages { parts.append("messages=\(n)") }
        return parts.joined(separator: ",")
    }
}
