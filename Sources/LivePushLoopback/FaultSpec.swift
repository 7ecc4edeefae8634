/// The text form of a ``FaultRule``: `FAULT[=ARG][@WHEN[,WHEN...]]`.
///
/// FAULT: `refuse`, `reset`, `reset-after-bytes=SIZE`, `reset-after=DURATION`, `stall`,
/// `stale[=DURATION]`, `blackhole`,
/// `throttle=SIZE` (bytes per second), `latency=DURATION`, `close-handshake`, `reject-connect`,
/// `reject-publish[=badname|already]`, `close-after-publish`, `malformed-reply`, `truncated-reply`,
/// `reconnect-request[=TCURL]` (TCURL: `rtmp://host[:port]/app`, `//host/app` or `/app`, without `@`).
///
/// WHEN: `conn=K`, `conn=K-M`, `conn=K-` (connections, 1-based), `after=DURATION` (since the
/// connection was accepted), `at=DURATION` (since the loopback started), `messages=N` (RTMP
/// messages from the client). SIZE: bytes with an optional `k` (×1024) or `m` (×1048576) suffix.
/// DURATION: a number with `ms` or `s` (`200ms`, `1.5s`).
public enum FaultSpec {
    /// The fault names, for help texts.
    public static let faultNames = [
        "refuse", "reset", "reset-after-bytes=SIZE", "reset-after=DURATION", "stall", "stale[=DURATION]", "blackhole",
        "throttle=SIZE",
        "latency=DURATION", "close-handshake", "reject-connect", "reject-publish[=badname|already]",
        "close-after-publish", "malformed-reply", "truncated-reply", "reconnect-request[=TCURL]",
    ]

    /// The spec syntax, for help texts.
    public static let syntax = "FAULT[=ARG][@WHEN[,WHEN...]] with WHEN one of conn=K, conn=K-M, conn=K-, after=DURATION, at=DURATION, messages=N"

    /// Parses one spec, as `reset-after=2s@conn=1`.
    public static func parse(_ text: String) throws(FaultSpecError) -> FaultRule {
        func fail(_ reason: String) -> FaultSpecError { FaultSpecError(spec: text, reason: reason) }
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw fail("empty spec; expected \(syntax)") }
        let halves = trimmed.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let faultPart = String(halves[0])
        let (name, argument) = splitAssignment(faultPart)
        let fault = try parseFault(name: name, argument: argument, fail: fail)
        var trigger = FaultTrigger()
        if halves.count == 2 {
            let conditions = halves[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if conditions.allSatisfy({ $0.isEmpty }) { throw fail("nothing after '@'; expected WHEN: conn=K[-M], after=DURATION, at=DURATION or messages=N") }
            for condition in conditions {
                try parseCondition(condition, into: &trigger, fail: fail)
            }
        }
        return FaultRule(fault, when: trigger)
    }

    static func splitAssignment(_ s: String) -> (String, String?) {
        guard let eq = s.firstIndex(of: "=") else { return (s.lowercased(), nil) }
        return (String(s[..<eq]).lowercased(), String(s[s.index(after: eq)...]))
    }

    private static func parseFault(name: String, argument: String?, fail: (String) -> FaultSpecError) throws(FaultSpecError) -> Fault {
        func noArgument(_ fault: Fault) throws(FaultSpecError) -> Fault {
            if let argument { throw fail("'\(name)' takes no argument (got '=\(argument)')") }
            return fault
        }
        func required(_ what: String) throws(FaultSpecError) -> String {
            guard let argument, !argument.isEmpty else { throw fail("'\(name)' needs \(what), e.g. \(example(name))") }
            return argument
        }
        switch name {
        case "refuse": return try noArgument(.refuse)
        case "reset": return try noArgument(.reset)
        case "reset-after-bytes":
            let arg = try required("a size")
            guard let n = size(arg) else { throw fail("'\(arg)' is not a size (bytes, optionally with k or m: 200000, 64k, 1m)") }
            return .resetAfterBytes(n)
        case "reset-after":
            let arg = try required("a duration")
            guard let d = duration(arg) else { throw fail(durationHint(arg)) }
            return .resetAfter(d)
        case "stall": return try noArgument(.stall)
        case "stale":
            guard let argument else { return .stale(nil) }
            guard let d = duration(argument) else { throw fail(durationHint(argument)) }
            return .stale(d)
        case "blackhole": return try noArgument(.blackhole)
        case "throttle":
            let arg = try required("a rate in bytes per second")
            guard let n = size(arg), n > 0 else { throw fail("'\(arg)' is not a positive rate in bytes per second (64k, 1m, 50000)") }
            return .throttle(bytesPerSecond: n)
        case "latency":
            let arg = try required("a duration")
            guard let d = duration(arg) else { throw fail(durationHint(arg)) }
            return .latency(d)
        case "close-handshake", "close-during-handshake": return try noArgument(.closeDuringHandshake)
        case "reject-connect": return try noArgument(.rejectConnect)
        case "reject-publish":
            guard let argument else { return .rejectPublish(.badName) }
            switch argument.lowercased() {
            case "badname", "bad-name": return .rejectPublish(.badName)
            case "already", "already-publishing": return .rejectPublish(.alreadyPublishing)
            default: throw fail("reject-publish takes 'badname' or 'already', not '\(argument)'")
            }
        case "close-after-publish": return try noArgument(.closeAfterPublish)
        case "malformed-reply": return try noArgument(.malformedReply)
        case "truncated-reply": return try noArgument(.truncatedReply)
        case "reconnect-request":
            guard let argument else { return .reconnectRequest(tcUrl: nil) }
            guard !argument.isEmpty, argument.utf8.count <= 1024, argument.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
                  !argument.contains(",") else {
                throw fail("reconnect-request takes a tcUrl such as rtmp://127.0.0.1:1936/live, //host/app or /app (printable, no spaces or commas, at most 1024 characters), not '\(argument)'")
            }
            return .reconnectRequest(tcUrl: argument)
        case "":
            throw fail("missing fault name; known faults: \(faultNames.joined(separator: ", "))")
        default:
            throw fail("unknown fault '\(name)'; known faults: \(faultNames.joined(separator: ", "))")
        }
    }

    private static func example(_ name: String) -> String {
        switch name {
        case "reset-after-bytes": return "reset-after-bytes=200000"
        case "reset-after": return "reset-after=2s"
        case "throttle": return "throttle=64k"
        case "latency": return "latency=200ms"
        default: return name
        }
    }

    static func parseCondition(_ condition: String, into trigger: inout FaultTrigger, fail: (String) -> FaultSpecError) throws(FaultSpecError) {
        let (key, value) = splitAssignment(condition.trimmingSpaces)
        guard let value, !value.isEmpty else {
            throw fail(key.isEmpty ? "empty condition after '@'" : "condition '\(condition)' needs a value, e.g. conn=1-2, after=1s, at=5s, messages=50")
        }
        switch key {
        case "conn", "connection", "connections":
            if trigger.connections != nil { throw fail("'conn' given twice") }
            trigger.connections = try connectionRange(value, fail: fail)
        case "after", "at":
            if trigger.afterTime != nil { throw fail("only one of 'after' and 'at' may be given, once") }
            guard let d = duration(value) else { throw fail(durationHint(value)) }
            trigger.afterTime = d
            trigger.timeOrigin = key == "after" ? .connectionStart : .loopbackStart
        case "messages", "msgs", "msg":
            if trigger.afterMessages != nil { throw fail("'messages' given twice") }
            guard let n = Int(value), n >= 0 else { throw fail("messages=\(value): expected a whole number ≥ 0") }
            trigger.afterMessages = n
        default:
            throw fail("unknown condition '\(key)'; expected conn=K[-M], after=DURATION, at=DURATION or messages=N")
        }
    }

    private static func connectionRange(_ value: String, fail: (String) -> FaultSpecError) throws(FaultSpecError) -> ClosedRange<Int> {
        let bounds = value.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let lower = Int(bounds[0]), lower >= 1 else {
            throw fail("conn=\(value): connections are numbered from 1 (conn=1, conn=1-2, conn=3-)")
        }
        if bounds.count == 1 { return lower...lower }
        if bounds[1].isEmpty { return lower...Int.max }
        guard let upper = Int(bounds[1]) else { throw fail("conn=\(value): '\(bounds[1])' is not a connection number") }
        guard upper >= lower else { throw fail("conn=\(value): the range is empty (\(upper) < \(lower))") }
        return lower...upper
    }

    static func durationHint(_ value: String) -> String {
        if Double(value) != nil { return "duration '\(value)' needs a unit: ms or s (e.g. \(value)s, \(value)ms)" }
        return "'\(value)' is not a duration (a number with ms or s: 200ms, 2s, 1.5s)"
    }

    /// Bytes with an optional k (×1024) or m (×1024²) suffix; nil when invalid or negative.
    static func size(_ text: String) -> Int? {
        var s = text.lowercased()
        var factor = 1
        if s.hasSuffix("b") { s.removeLast() }
        if s.hasSuffix("k") { factor = 1024; s.removeLast() } else if s.hasSuffix("m") { factor = 1024 * 1024; s.removeLast() }
        if let n = Int(s), n >= 0 {
            let (product, overflow) = n.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        if factor > 1, let d = Double(s), d >= 0, d.isFinite, d * Double(factor) < 1e15 {
            return Int((d * Double(factor)).rounded())
        }
        return nil
    }

    /// `200ms`, `2s`, `1.5s`; nil when invalid or negative.
    static func duration(_ text: String) -> Duration? {
        let s = text.lowercased()
        let (number, scale): (Substring, Double)
        if s.hasSuffix("ms") {
            (number, scale) = (s.dropLast(2), 1e-3)
        } else if s.hasSuffix("s") {
            (number, scale) = (s.dropLast(1), 1)
        } else {
            return nil
        }
        guard let value = Double(number), value >= 0, value.isFinite, value < 1e9 else { return nil }
        return .nanoseconds(Int64((value * scale * 1e9).rounded()))
    }

    /// `1500ms` → "1500ms", whole seconds → "2s".
    static func format(_ d: Duration) -> String {
        let ns = d.totalNanoseconds
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000)s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        return "\(Double(ns) / 1e9)s"
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return ns &+ attoseconds / 1_000_000_000
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
