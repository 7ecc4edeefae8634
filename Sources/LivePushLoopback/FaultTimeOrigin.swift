/// What ``FaultTrigger/afterTime`` is measured from.
public enum FaultTimeOrigin: Sendable, Equatable {
    /// From the moment the connection was accepted (spec `after=`).
    case connectionStart
    /// From ``FaultLoopback/start()`` (spec `at=`).
    case loopbackStart
}
