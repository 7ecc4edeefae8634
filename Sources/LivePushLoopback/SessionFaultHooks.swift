/// What ``RTMPSessionHandler`` asks before it answers, so that RTMP-level faults can replace or
/// cut its replies. Implemented by ``FaultHandler``; called on the channel's event loop.
protocol SessionFaultHooks: AnyObject {
    /// The first due, not yet injected RTMP-level rule whose fault satisfies `predicate`; it is
    /// marked injected (and reported) before it is returned.
    func takeRTMPFault(_ predicate: (Fault) -> Bool) -> FaultRule?
    /// The next outbound write is cut in half and the connection closed after it.
    func truncateNextWrite(rule: FaultRule)
    /// Records why the session handler is about to close the connection.
    func noteClose(_ reason: String)
    /// Set when a `stale` or `blackhole` fault means the "server" must not learn that this
    /// connection ended: how long it keeps holding its publishes (nil inside: until the loopback
    /// stops). Nil when the connection ends normally.
    var serverHoldsPublishes: Duration?? { get }
}
