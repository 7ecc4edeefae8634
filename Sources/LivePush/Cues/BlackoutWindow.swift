import FoundationEssentials

/// A blackout known in advance (``BreakOptions/blackouts``): the main content is replaced by
/// the alternate content (else the slate) from `start` for `duration`.
public struct BlackoutWindow: Sendable, Equatable {
    /// Where a blackout starts.
    public enum Start: Sendable, Equatable {
        /// A position on the output timeline (seconds of stream from its start).
        case position(Duration)
        /// A wall-clock time: the push's output clock puts it where the output is released
        /// at that time of day, after any pause (so it holds in real time; in `--fast` mode
        /// output time 0 stands for the push's start).
        case wallClock(Date)
    }

    /// Where the blackout starts.
    public var start: Start
    /// How long the blackout lasts.
    public var duration: Duration

    /// Creates a blackout window.
    public init(start: Start, duration: Duration) {
        self.start = start
        self.duration = duration
    }

    /// Parses `START+SECONDS`, where START is seconds of the output timeline or an ISO 8601
    /// time (`2026-11-23T10:00:00Z`). Throws `breakSetupInvalid` naming what is wrong.
    public init(parsing text: String) throws(LivePushError) {
        guard let plus = text.lastIndex(of: "+"), let seconds = Double(text[text.index(after: plus)...]),
              PlayoutSchedule.isTime(seconds, positive: true) else {
            throw LivePushError(.breakSetupInvalid, "blackout \"\(text)\": write START+SECONDS, e.g. 30+10 or 2026-11-23T10:00:00Z+600")
        }
        let startText = String(text[..<plus])
        if let position = Double(startText), PlayoutSchedule.isTime(position) {
            start = .position(.milliseconds(Int64(position * 1000)))
        } else if let date = try? Date(startText, strategy: .iso8601) {
            start = .wallClock(date)
        } else {
            throw LivePushError(.breakSetupInvalid, "blackout \"\(text)\": the start is neither seconds nor an ISO 8601 time")
        }
        duration = .milliseconds(Int64(seconds * 1000))
    }

    /// Where it starts on the output timeline (µs). A wall-clock start is placed by the push's
    /// ``OutputClock`` (`outputTimeOfWall`, µs since 1970 → output time): the one owner of time.
    func outputStart(outputTimeOfWall: (Int64) -> Int64) -> Int64 {
        switch start {
        case .position(let position): position.nanoseconds / 1000
        case .wallClock(let date): outputTimeOfWall(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
        }
    }
}
