/// A fault and when to inject it. `description` is the spec syntax (``FaultSpec/parse(_:)``
/// reads it back).
public struct FaultRule: Sendable, Equatable, CustomStringConvertible {
    /// What to inject.
    public var fault: Fault
    /// When to inject it.
    public var trigger: FaultTrigger

    /// Creates a rule.
    public init(_ fault: Fault, when trigger: FaultTrigger = .always) {
        self.fault = fault
        self.trigger = trigger
    }

    /// Creates a rule.
    public init(fault: Fault, trigger: FaultTrigger = .always) {
        self.init(fault, when: trigger)
    }

    public var description: String {
        let when = trigger.specText
        return when.isEmpty ? fault.specText : fault.specText + "@" + when
    }
}
