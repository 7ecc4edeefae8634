/// A fault spec that ``FaultSpec/parse(_:)`` could not read; `description` says why and shows
/// the expected syntax.
public struct FaultSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole spec as given.
    public var spec: String
    /// What is wrong with it.
    public var reason: String

    /// Creates an error about a spec.
    public init(spec: String, reason: String) {
        self.spec = spec
        self.reason = reason
    }

    public var description: String { "invalid fault '\(spec)': \(reason)" }
}
