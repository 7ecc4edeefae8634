/// Whether a published WHIP session's path still carries our RTP, from the endpoint's receiver
/// reports: the extended highest sequence number they report received grows while our packets
/// arrive, and stands still when the path is cut. Pure; fed each statistics reading.
///
/// webrtcbin's ICE state cannot tell: libnice (0.1.21, as webrtcbin 1.22 makes its agent) keeps
/// the pair up with STUN indications, which need no answer, and runs no consent checks (RFC
/// 7675), so a cut path stays "connected" for libnice's 50 s keepalive timeout. The reports
/// come every second or so (RFC 3550's interval for a session this small).
///
/// A session whose endpoint has sent no report yet is judged by ICE alone (some never send
/// one), and one that we send nothing on is not judged: no packets, no reports to expect.
struct WHIPPathWatch: Sendable, Equatable {
    /// How long the reports may stand still while we send before the path counts as lost.
    static let stallAfter: Int64 = 3_000_000
    /// Packets sent since the reports last moved before their standing still means anything.
    static let minimumPacketsSent: UInt64 = 10

    private var lastSequence: UInt64?
    private var progressAt: Int64?
    private var sentAtProgress: UInt64 = 0
    private var lastSent: UInt64 = 0

    /// One reading: the reports' sequence sum and our packets sent. `.connected` when the
    /// endpoint got more of our packets, `.lost` when it got none for ``stallAfter`` while we
    /// sent, `.checking` when it cannot tell yet.
    mutating func observe(highestSequence: UInt64, packetsSent: UInt64, now: Int64) -> WHIPPatchStateMachine.ICE {
        defer {
            lastSequence = highestSequence
            lastSent = packetsSent
        }
        let moved = lastSequence.map { highestSequence != $0 } ?? (highestSequence > 0)
        if moved {
            progressAt = now
            sentAtProgress = packetsSent
            return .connected
        }
        guard let progressAt else { return .checking }
        let sending = packetsSent >= sentAtProgress + Self.minimumPacketsSent
        return sending && now - progressAt >= Self.stallAfter ? .lost : .checking
    }

    /// Whether the endpoint's reports have moved at least once: before that, the path is
    /// judged by ICE alone.
    var judges: Bool { progressAt != nil }

    /// After an ICE restart: a fresh window for the reports to move again.
    mutating func restarted(now: Int64) {
        guard progressAt != nil else { return }
        progressAt = now
        sentAtProgress = lastSent
    }
}
