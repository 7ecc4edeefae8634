/// The as-run log's logic, pure: what the playout driver sees (an entry going on air at an
/// output time, a break replacing it and ending, a skip, a failure, the end) in, the records
/// of what aired out. Times in are µs of the output clock; records carry them as wall-clock
/// time from the channel's start. It never reads a clock and does no I/O.
///
/// An entry cut by a break is logged as the parts that aired: the part before (ended
/// `cutByBlackout` for a blackout), the break, and the part after. An entry that began and
/// ended underneath a blackout never aired and has no line.
package struct AsRunLedger: Sendable {
    /// Something that can air.
    package struct Item: Sendable, Equatable {
        package var id: String
        package var kind: AsRunRecord.Kind
        package var title: String
        package var source: String
        package var eventID: UInt32?

        package init(id: String, kind: AsRunRecord.Kind, title: String, source: String, eventID: UInt32? = nil) {
            self.id = id
            self.kind = kind
            self.title = title
            self.source = source
            self.eventID = eventID
        }
    }

    /// Output time 0 on the wall clock, µs since 1970.
    package private(set) var channelStart: Int64
    /// Whether a line was written (the start is then fixed).
    private var wrote = false
    /// What airs now, since when (output µs).
    private var onAir: (item: Item, start: Int64)?
    /// The timeline's entry: on air, or running underneath a break.
    private(set) var entry: Item?
    /// Output time at which the entry's own time began (nil: it began underneath a break).
    private(set) var entryStart: Int64?
    /// A break (blackout, ad break from a cue) replaces the timeline's entry.
    private(set) var inBreak = false
    /// How the entry on air ends when it next ends (a skip asked for).
    private var pendingEnding: AsRunRecord.Ending?
    /// A stand-in (the slate, a backup) airs in place of the entry's lost source.
    private var standingIn = false

    package init(channelStart: Int64) {
        self.channelStart = channelStart
    }

    /// The channel's first frame was released: output time 0 is `start` on the wall clock
    /// (more exact than the reading taken when the channel was set up). Fixed once a line is out.
    package mutating func anchor(channelStart start: Int64) {
        if !wrote { channelStart = start }
    }

    /// The timeline's next entry goes on air at output time `time`; the one before ended there.
    /// Underneath a break (or `time` nil: the switcher did not put it on air) it only becomes
    /// the entry that comes back when the break ends.
    package mutating func entryStarted(_ item: Item, at time: Int64?) -> [AsRunRecord] {
        entry = item
        guard let time, !inBreak else {
            entryStart = nil
            pendingEnding = nil
            return []
        }
        let records = close(at: time, ending: .completed)
        entryStart = time
        onAir = (item, time)
        standingIn = false
        return records
    }

    /// The live entry on air lost its feed at output time `time`: its part ends `failed`, and
    /// `standIn` (the slate, the backup) airs until the feed is back or the entry ends.
    package mutating func standInStarted(_ standIn: Item, at time: Int64) -> [AsRunRecord] {
        guard !inBreak else { return [] }
        let records = close(at: time, ending: standingIn ? .completed : .failed)
        standingIn = true
        onAir = (standIn, time)
        return records
    }

    /// The live entry's feed is back at output time `time`: the entry airs again.
    package mutating func standInEnded(at time: Int64) -> [AsRunRecord] {
        guard standingIn, !inBreak else { return [] }
        let records = close(at: time, ending: .completed)
        standingIn = false
        if let entry { onAir = (entry, time) }
        return records
    }

    /// The entry on air is ending because of a skip: its line says so.
    package mutating func skipRequested() {
        if !inBreak { pendingEnding = .skipped }
    }

    /// The entry on air failed at output time `time` (what stands in for it follows).
    package mutating func entryFailed(at time: Int64) -> [AsRunRecord] {
        guard !inBreak else { return [] }
        return close(at: time, ending: .failed)
    }

    /// A break replaces the entry from output time `time`.
    package mutating func breakStarted(_ item: Item, at time: Int64) -> [AsRunRecord] {
        let cut: AsRunRecord.Ending = item.kind == .blackout || item.kind == .alternate ? .cutByBlackout : .completed
        let records = inBreak ? close(at: time, ending: .completed) : close(at: time, ending: cut)
        inBreak = true
        onAir = (item, time)
        return records
    }

    /// The break ended at output time `time`: the entry underneath (if any) is on air again.
    package mutating func breakEnded(at time: Int64) -> [AsRunRecord] {
        guard inBreak else { return [] }
        let records = close(at: time, ending: .completed)
        inBreak = false
        if let entry { onAir = (entry, time) }
        return records
    }

    /// The channel ended at output time `time`.
    package mutating func finished(at time: Int64) -> [AsRunRecord] {
        let records = close(at: time, ending: .completed)
        entry = nil
        inBreak = false
        return records
    }

    /// The line of what aired until `time`, if it aired at all (a millisecond or more).
    private mutating func close(at time: Int64, ending: AsRunRecord.Ending) -> [AsRunRecord] {
        defer {
            onAir = nil
            if !inBreak { pendingEnding = nil }
        }
        guard let (item, start) = onAir, time - start >= 1000 else { return [] }
        wrote = true
        // A skip asked for names how the entry ended, unless it failed or a blackout cut it first.
        let why = inBreak || ending != .completed ? ending : pendingEnding ?? ending
        return [AsRunRecord(id: item.id, kind: item.kind, title: item.title, source: item.source,
                            start: channelStart + start, duration: time - start, eventID: item.eventID, ending: why)]
    }
}
