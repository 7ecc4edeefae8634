import Synchronization

/// A playout channel's paperwork: its programme guide (XMLTV, rewritten as the schedule
/// changes) and its as-run log, fed with the channel's ``PlayoutEvent``s. Used by
/// `livepush playout` (`--epg`, `--as-run`, `GET /epg.xml`, `GET /as-run`) and by each
/// channel of `livepush channels`. The I/O is here; what to write is ``XMLTVGuide``'s and
/// ``AsRunLedger``'s.
package final class ScheduleExports: Sendable {
    /// A guide that could not be written is reported once (it is tried again at every change).
    private let guideFailed = Mutex(false)
    /// The XMLTV channel id and display name.
    package let channelID: String
    /// Where the guide is kept (nil: only served).
    package let guidePath: String?
    /// The as-run lines (and their file).
    package let journal: AsRunJournal

    /// Opens the as-run log (appending) when there is one; `scheduleExportFailed` when it cannot.
    /// `GET /as-run` answers the last `kept` lines.
    package init(channelID: String, guidePath: String?, asRunPath: String?, keeping kept: Int = AsRunJournal.keptLines) throws(LivePushError) {
        if let guidePath { try GuideFile.checkWritable(guidePath) }
        self.channelID = channelID
        self.guidePath = guidePath
        journal = try AsRunJournal(path: asRunPath, keeping: kept)
    }

    /// A channel's: when its as-run file cannot be opened, `failed` is told and the lines are
    /// kept in memory only (a channel of `livepush channels` starts anyway, as with a recording).
    package static func channel(_ spec: ChannelSpec, failed: (LivePushError) -> Void) -> ScheduleExports {
        let kept = AsRunJournal.keptLinesPerChannel
        do throws(LivePushError) {
            return try ScheduleExports(channelID: spec.id, guidePath: spec.epg, asRunPath: spec.asRun, keeping: kept)
        } catch {
            failed(error)
            // Either the guide was what failed and the log opens now, or the log's own error is
            // the one just reported: a second report of it would say nothing new.
            let journal = (try? AsRunJournal(path: spec.asRun, keeping: kept)) ?? AsRunJournal(keeping: kept)
            return ScheduleExports(channelID: spec.id, guidePath: spec.epg, journal: journal)
        }
    }

    private init(channelID: String, guidePath: String?, journal: AsRunJournal) {
        self.channelID = channelID
        self.guidePath = guidePath
        self.journal = journal
    }

    /// The guide of `control`'s channel now.
    package func guide(_ control: PlayoutControl) -> String {
        control.programmeGuide(channelID: channelID, displayName: channelID)
    }

    /// Writes the guide file (if any) from `control`.
    package func writeGuide(_ control: PlayoutControl) throws(LivePushError) {
        guard let guidePath else { return }
        try GuideFile.write(guide(control), to: guidePath)
    }

    /// Acts on an event of the channel: an item that aired is logged; the guide is rewritten
    /// when the channel starts and when its schedule changes. Returns what could not be written.
    package func handle(_ event: PlayoutEvent, control: PlayoutControl?) -> LivePushError? {
        switch event {
        case .aired(let record):
            return journal.append(record)
        case .channelStarted, .timelineChanged:
            guard let control else { return nil }
            do throws(LivePushError) {
                try writeGuide(control)
                guideFailed.withLock { $0 = false }
            } catch {
                return guideFailed.withLock { failed in
                    defer { failed = true }
                    return failed ? nil : error
                }
            }
            return nil
        default:
            return nil
        }
    }
}
