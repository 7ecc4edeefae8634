/// When an HLS input's reader hands each picture to the live input: at the pace of its media
/// time, one target duration behind the first (the input's buffer), `lead` ahead of when the
/// output needs it (the live input's jitter buffer) from the second on.
///
/// A playlist delivers a whole segment at once, then nothing until the next: decoded as it
/// comes, a segment would overflow the live input's jitter buffer (made for a feed that arrives
/// in real time) and lose what is beyond it, about 40 % of every 1 s segment. Paced, the
/// feed arrives as a real-time one does, and the segments wait encoded, a few hundred KiB each,
/// rather than as pictures. Pure (µs): the reader gives it the times and waits as it says.
///
/// - **Start**: the first picture is due `startDelay` after it was decoded, so one target
///   duration of media is in hand before the output starts on it: the next segment has that
///   long to arrive.
/// - **A boundary** (a discontinuity, a gap, a restart: the demuxer started afresh): the next
///   picture follows the last one, whatever its timestamp.
/// - **Late** (a segment came later than its time, by more than `lead`): the pace starts again
///   `startDelay` from now, refilling the buffer, rather than hurrying what is left.
/// - **A jump ahead** (a timestamp more than `startDelay` + 2 s in the future): the pace starts
///   again from now, as the timestamps no longer say anything about the wall.
struct HLSPacer: Sendable, Equatable {
    let startDelay: Int64
    let lead: Int64
    private var anchor: (wall: Int64, media: Int64)?
    private var lastDue: Int64?
    private var followsLast = false
    /// Times the pace started again (late or a jump), for the figures.
    private(set) var restarts = 0

    static func == (a: Self, b: Self) -> Bool {
        a.startDelay == b.startDelay && a.lead == b.lead && a.anchor?.wall == b.anchor?.wall && a.anchor?.media == b.anchor?.media
            && a.lastDue == b.lastDue && a.followsLast == b.followsLast && a.restarts == b.restarts
    }

    init(startDelay: Int64, lead: Int64) {
        self.startDelay = max(0, startDelay)
        self.lead = max(0, lead)
    }

    /// When (µs, monotonic) to hand over the picture of media time `media`, decoded at `now`;
    /// `frameDuration` spaces a picture that follows a boundary.
    mutating func releaseTime(media: Int64, now: Int64, frameDuration: Int64) -> Int64 {
        if followsLast, let lastDue {
            anchor = (lastDue + frameDuration, media)
        }
        followsLast = false
        guard let anchor else {
            return start(media: media, at: now + startDelay)
        }
        let due = anchor.wall + (media - anchor.media)
        if due < now - lead {
            restarts += 1
            return start(media: media, at: now + startDelay)
        }
        if due > now + startDelay + 2_000_000 {
            restarts += 1
            return start(media: media, at: now)
        }
        lastDue = due
        return due - lead
    }

    /// The next picture follows the last one (the demuxer started afresh).
    mutating func boundary() {
        followsLast = lastDue != nil
    }

    /// The feed is read anew (after a failure): the next picture starts the pace again.
    mutating func reset() {
        anchor = nil
        lastDue = nil
        followsLast = false
    }

    /// The pace starts: this picture goes at its due time, and those within `lead` after it
    /// with it (they are due before it is handed over), so the output, which starts on the
    /// first picture it sees, has `lead` in hand from then on. Handed over `lead` early, the
    /// first would only move the output's start that much earlier, and leave it none.
    private mutating func start(media: Int64, at due: Int64) -> Int64 {
        anchor = (due, media)
        lastDue = due
        return due
    }
}
