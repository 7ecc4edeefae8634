/// An SRT fault and when to inject it. `description` is the spec syntax
/// (``SRTFaultSpec/parse(_:)`` reads it back). The trigger is the RTMP loopback's
/// ``FaultTrigger``: `conn=K` counts SRT sessions (callers), `after=` runs from a session's first
/// packet, `at=` from the relay's start, and `messages=N` (or `packets=N`) counts the data
/// packets the caller sent in the session.
public struct SRTFaultRule: Sendable, Equatable, CustomStringConvertible {
    /// What to inject.
    public var fault: SRTFault
    /// When to inject it.
    public var trigger: FaultTrigger

    /// Creates a rule.
    public init(_ fault: SRTFault, when trigger: FaultTrigger = .always) {
        self.fault = fault
        self.trigger = trigger
    }

    public var description: String {
        let when = trigger.specText
        return when.isEmpty ? fault.specText : fault.specText + "@" + when
    }
}
