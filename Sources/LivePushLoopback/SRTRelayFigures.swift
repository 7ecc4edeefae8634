/// What an ``SRTRelay`` session carried: datagrams from each side, and those a fault dropped.
public struct SRTRelayFigures: Sendable, Equatable, CustomStringConvertible {
    /// Datagrams the caller sent (forwarded or not).
    public var packetsFromCaller = 0
    /// Datagrams the listener sent back (forwarded or not).
    public var packetsFromListener = 0
    /// The caller's data packets among ``packetsFromCaller``: `messages=N` counts these.
    public var dataPacketsFromCaller = 0
    /// Datagrams a fault kept from the other side (either direction).
    public var packetsDropped = 0

    /// Creates empty figures.
    public init() {}

    public var description: String {
        "\(packetsFromCaller) packets from the caller (\(dataPacketsFromCaller) data), \(packetsFromListener) from the listener, "
            + "\(packetsDropped) dropped by faults"
    }
}
