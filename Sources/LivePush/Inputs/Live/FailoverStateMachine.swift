/// Decides, frame by frame, what a live input's output shows: the primary feed, a fill while
/// it is late, then the backup or the slate once it is lost, and the primary again once it has
/// delivered steadily for a while. Pure: ``FailoverInput`` feeds it the feed's arrival times
/// and carries out what it returns.
///
/// - **On the primary**, a frame slot with no frame from the feed is filled (``InputLossFill``:
///   the last picture again, black, or the slate) with silence. A feed with no media for the
///   input timeout is lost: `inputLost`, and the backup (else the slate) goes on air.
/// - **On the backup or slate**, the primary is retried all the while; once it has delivered
///   without a gap for ``LiveInputOptions/returnAfter`` the output switches back.
struct FailoverStateMachine: Sendable {
    typealias Source = LiveInputSource

    /// What one frame slot shows.
    enum Show: Sendable, Equatable {
        case primary
        /// The primary is late: the fill, until the timeout decides.
        case fill
        case backup
        case slate
    }

    struct Decision: Sendable, Equatable {
        var show: Show
        var events: [InputEvent] = []
    }

    private let timeout: Int64
    private let returnAfter: Int64
    private let hasBackup: Bool
    private(set) var onAir: Source = .primary
    /// When the output started (µs, monotonic): a primary that never delivers is lost after the timeout.
    private var startedAt: Int64?
    private(set) var switches = 0

    init(options: LiveInputOptions, hasBackup: Bool) {
        timeout = max(1, options.timeout.nanoseconds / 1000)
        returnAfter = max(0, options.returnAfter.nanoseconds / 1000)
        self.hasBackup = hasBackup
    }

    /// The decision for the slot at `now`. `lastArrival`: when the primary last delivered a
    /// frame; `steadySince`: since when it has delivered without a gap (nil while it does not);
    /// `hasFrame`: whether a primary frame is waiting for this slot.
    mutating func decide(now: Int64, lastArrival: Int64?, steadySince: Int64?, hasFrame: Bool) -> Decision {
        let started = startedAt ?? now
        startedAt = started
        switch onAir {
        case .primary:
            if hasFrame { return Decision(show: .primary) }
            let silentSince = lastArrival ?? started
            guard now - silentSince >= timeout else { return Decision(show: .fill) }
            let fallback: Source = hasBackup ? .backup : .slate
            onAir = fallback
            switches += 1
            let error = LivePushError(.inputLost, "no media from the primary input for \(timeout / 1000) ms; \(fallback.rawValue) on air")
            return Decision(show: fallback == .backup ? .backup : .slate, events: [.lost(error), .switched(to: fallback)])
        case .backup, .slate:
            if let steadySince, now - steadySince >= returnAfter, hasFrame {
                onAir = .primary
                switches += 1
                return Decision(show: .primary, events: [.recovered, .switched(to: .primary)])
            }
            return Decision(show: onAir == .backup ? .backup : .slate)
        }
    }

    /// The backup cannot be played (it failed to open or to decode): the slate stands in.
    mutating func backupFailed(_ error: LivePushError) -> [InputEvent] {
        guard onAir == .backup else { return [] }
        onAir = .slate
        switches += 1
        return [.backupFailed(error), .switched(to: .slate)]
    }
}
