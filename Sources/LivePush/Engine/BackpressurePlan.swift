/// In `--fast` mode, what the producer does about its outputs' queues before its next packet:
/// which output it waits for, and which may shed instead. Pure; the producer reads each
/// output's room and carries the plan out (``PushEngine/outputAwaitingRoom()``).
///
/// While one output is connected, a disconnected one does not hold the others back: it drops
/// its oldest whole GOPs and resumes on a keyframe. While none is, all are waited for, so a
/// single output loses nothing across a reconnect.
///
/// Shedding is decided here, by the producer, from the same reading of the room that decides
/// the wait, and never again by an output when a packet arrives: a producer that found room
/// while its only output was connected may hand over its next packet just after the connection
/// was lost and the resend history was put back into the queue (which fills it). The output,
/// seeing itself full and disconnected, took that for "not waited for" and dropped its oldest
/// GOPs, the unacknowledged frames it was about to send again among them: 15 or 16 frames of
/// 2,000 lost under load (`FastResumeNginxTests`).
struct BackpressurePlan: Equatable {
    /// One output's room, read under its lock.
    struct Room: Equatable {
        var isFull: Bool
        var isConnected: Bool
    }

    /// The output (its index) to wait for before the next packet; nil: the packet may go.
    let waitFor: Int?
    /// Full, disconnected outputs that another output carries the push for: they make room by
    /// dropping their oldest whole GOPs rather than being waited for.
    let shed: [Int]

    init(room: [Room]) {
        let anyConnected = room.contains(where: \.isConnected)
        waitFor = room.indices.first { room[$0].isFull && (!anyConnected || room[$0].isConnected) }
        shed = anyConnected ? room.indices.filter { room[$0].isFull && !room[$0].isConnected } : []
    }
}
