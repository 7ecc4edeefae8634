/// A fault the ``SRTRelay`` can inject into an SRT session (the datagrams between one caller
/// address and the listener). SRT runs over UDP: every fault is a datagram not forwarded, as a
/// network would lose it; the relay never answers for the listener.
public enum SRTFault: Sendable, Equatable {
    /// Drop the caller's handshake packets (control type 0x0000), so the listener never hears
    /// of it and the caller's connect times out (LivePush: `connectFailed`).
    case refuse
    /// Forward nothing more in either direction, for good: the path died. Both ends give up
    /// after their peer idle timeout (LivePush: `connectionLost`, then a reconnect).
    case drop
    /// Forward nothing in either direction for this long, then go on: what was sent meanwhile is
    /// lost, as in a network outage; SRT retransmits what is still in time.
    case stall(Duration)
    /// Drop this percentage (0-100) of the data packets at random, in either direction.
    case loss(percent: Double)

    /// The spec syntax (``SRTFaultSpec``) of the fault part, e.g. `stall=3s`.
    public var specText: String {
        switch self {
        case .refuse: "refuse"
        case .drop: "drop"
        case .stall(let d): "stall=\(FaultSpec.format(d))"
        case .loss(let percent):
            percent == percent.rounded() && percent < 1e15 ? "loss=\(Int(percent))%" : "loss=\(percent)%"
        }
    }
}
