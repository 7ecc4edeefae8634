/// The text form of an ``SRTFaultRule``: `FAULT[=ARG][@WHEN[,WHEN...]]`, as ``FaultSpec``'s.
///
/// FAULT: `refuse`, `drop`, `stall=DURATION`, `loss=PERCENT` (`loss=5` or `loss=5%`).
/// WHEN: `conn=K`, `conn=K-M`, `conn=K-` (SRT sessions, 1-based), `after=DURATION` (since the
/// session's first packet), `at=DURATION` (since the relay started), `messages=N` or
/// `packets=N` (data packets from the caller). Examples: `refuse@conn=1-2`,
/// `drop@conn=1,after=2s`, `stall=3s@after=2s`, `loss=5%`, `drop@packets=500`.
public enum SRTFaultSpec {
    /// The fault names, for help texts.
    public static let faultNames = ["refuse", "drop", "stall=DURATION", "loss=PERCENT"]

    /// The spec syntax, for help texts.
    public static let syntax = "FAULT[=ARG][@WHEN[,WHEN...]] with WHEN one of conn=K, conn=K-M, conn=K-, after=DURATION, at=DURATION, packets=N"

    /// Parses one spec, as `drop@conn=1,after=2s`.
    public static func parse(_ text: String) throws(FaultSpecError) -> SRTFaultRule {
        func fail(_ reason: String) -> FaultSpecError { FaultSpecError(spec: text, reason: reason) }
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw fail("empty spec; expected \(syntax)") }
        let halves = trimmed.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let (name, argument) = FaultSpec.splitAssignment(String(halves[0]))
        let fault = try parseFault(name: name, argument: argument, fail: fail)
        var trigger = FaultTrigger()
        if halves.count == 2 {
            let conditions = halves[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if conditions.allSatisfy({ $0.isEmpty }) { throw fail("nothing after '@'; expected WHEN: conn=K[-M], after=DURATION, at=DURATION or packets=N") }
            for condition in conditions {
                var condition = condition.trimmingSpaces
                if condition.lowercased().hasPrefix("packets=") { condition = "messages=" + condition.dropFirst("packets=".count) }
                try FaultSpec.parseCondition(condition, into: &trigger, fail: fail)
            }
        }
        return SRTFaultRule(fault, when: trigger)
    }

    private static func parseFault(name: String, argument: String?, fail: (String) -> FaultSpecError) throws(FaultSpecError) -> SRTFault {
        switch name {
        case "refuse", "drop":
            if let argument { throw fail("'\(name)' takes no argument (got '=\(argument)')") }
            return name == "refuse" ? .refuse : .drop
        case "stall":
            guard let argument, !argument.isEmpty else {
                throw fail("an SRT stall needs a duration, e.g. stall=3s (a stall without an end is 'drop')")
            }
            guard let d = FaultSpec.duration(argument) else { throw fail(FaultSpec.durationHint(argument)) }
            guard d > .zero else { throw fail("a stall of \(argument) is none; give a length above zero") }
            return .stall(d)
        case "loss":
            guard let argument, !argument.isEmpty else { throw fail("'loss' needs a percentage, e.g. loss=5%") }
            let number = argument.hasSuffix("%") ? String(argument.dropLast()) : argument
            guard let percent = Double(number), percent.isFinite, percent >= 0, percent <= 100 else {
                throw fail("'\(argument)' is not a percentage from 0 to 100 (loss=5, loss=2.5%)")
            }
            return .loss(percent: percent)
        case "":
            throw fail("missing fault name; known SRT faults: \(faultNames.joined(separator: ", "))")
        default:
            throw fail("unknown SRT fault '\(name)'; known SRT faults: \(faultNames.joined(separator: ", "))")
        }
    }
}
