import FoundationEssentials
import Synchronization

/// A playout channel's as-run side: the ``AsRunLedger`` fed with what the producer's switcher
/// does, at output times, and its lines reported as ``PlayoutEvent/aired(_:)``. The program
/// forwards its ``InputSequence`` calls here; nothing here opens or times anything.
final class PlayoutAsRun: Sendable {
    private struct State {
        var ledger: AsRunLedger?
        /// What the timeline handed out, on air once the switcher says where.
        var next: AsRunLedger.Item?
    }

    private let state = Mutex(State())
    /// Read when the channel starts, and at its first frame's release: output time 0 on it.
    private let wallClock: any WallClock
    private let report: @Sendable (PlayoutEvent) -> Void

    init(wallClock: any WallClock, report: @escaping @Sendable (PlayoutEvent) -> Void) {
        self.wallClock = wallClock
        self.report = report
    }

    /// Output time 0 on the wall clock (µs since 1970), once the channel started.
    var channelStart: Int64? { state.withLock { $0.ledger?.channelStart } }

    /// The timeline handed out `item`: it airs when the switcher puts it on air
    /// (``onAir(at:eventID:)``); underneath a break it only runs on.
    func picked(_ item: AsRunLedger.Item) {
        tell(state.withLock { state -> [AsRunRecord] in
            guard state.ledger?.inBreak == true else {
                state.next = item
                return []
            }
            return state.ledger?.entryStarted(item, at: nil) ?? []
        })
    }

    /// The entry picked last is on air from output time `start`; `eventID`: its break's.
    func onAir(at start: Int64, eventID: UInt32?) {
        var started: Int64?
        tell(state.withLock { state -> [AsRunRecord] in
            if state.ledger == nil {
                // The channel's start: output time 0 is now (refined at its first frame's release).
                started = wallClock.nowMicroseconds - start
                state.ledger = AsRunLedger(channelStart: started!)
            }
            guard var item = state.next else { return [] }
            state.next = nil
            item.eventID = eventID
            return state.ledger?.entryStarted(item, at: start) ?? []
        })
        if let started { report(.channelStarted(Date(timeIntervalSince1970: Double(started) / 1e6))) }
    }

    /// The output's first frame was released at output time `time` (real time).
    func outputStarted(at time: Int64) {
        let now = wallClock.nowMicroseconds
        state.withLock { $0.ledger?.anchor(channelStart: now - time) }
    }

    func breakStarted(_ opportunity: PlacementOpportunity, fill: String, source: String?, at time: Int64) {
        let kind: AsRunRecord.Kind = opportunity.kind == .adBreak ? .ad : fill == "alternate" ? .alternate : .blackout
        let item = AsRunLedger.Item(id: String(opportunity.id), kind: kind, title: opportunity.kind == .blackout ? "Blackout" : fill,
                                    source: source ?? fill, eventID: opportunity.id)
        tell(state.withLock { $0.ledger?.breakStarted(item, at: time) ?? [] })
    }

    func breakEnded(at time: Int64) {
        tell(state.withLock { $0.ledger?.breakEnded(at: time) ?? [] })
    }

    func finished(at time: Int64) {
        tell(state.withLock { $0.ledger?.finished(at: time) ?? [] })
    }

    /// The entry on air failed after `played` seconds of it; `slate` airs from there.
    func failed(afterPlaying played: Double, slate: AsRunLedger.Item) {
        tell(state.withLock { state -> [AsRunRecord] in
            guard let start = state.ledger?.entryStart else { return [] }
            let stopped = start + MediaTime(seconds: played).microseconds
            return (state.ledger?.entryFailed(at: stopped) ?? []) + (state.ledger?.entryStarted(slate, at: stopped) ?? [])
        })
    }

    func skipRequested() {
        state.withLock { $0.ledger?.skipRequested() }
    }

    /// A live entry on air lost its feed (`standIn` airs) or got it back (nil), `played`
    /// seconds into it.
    func liveSwitched(entryID: String, to standIn: AsRunLedger.Item?, at played: Double) {
        tell(state.withLock { state -> [AsRunRecord] in
            guard state.ledger?.entry?.id == entryID, let start = state.ledger?.entryStart else { return [] }
            let time = start + MediaTime(seconds: played).microseconds
            guard let standIn else { return state.ledger?.standInEnded(at: time) ?? [] }
            return state.ledger?.standInStarted(standIn, at: time) ?? []
        })
    }

    private func tell(_ records: [AsRunRecord]) {
        for record in records { report(.aired(record)) }
    }
}
