/// A point or a span of time in microseconds: the one unit of the output clock, the pacer
/// and the switcher. Packets still carry bare `Int64` microseconds (``MediaPacket/dts``);
/// a value becomes `MediaTime` where it enters the clock's API and goes back at its edges.
struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds (on the monotonic clock for a due time or `now`, on the output timeline
    /// for media).
    var microseconds: Int64

    init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// `duration`, to the microsecond (truncated).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        microseconds = seconds * Self.microsecondsPerSecond + attoseconds / 1_000_000_000_000
    }

    /// `seconds`, rounded to the microsecond (a frame's length at a frame rate, a playlist's time).
    init(seconds: Double) {
        microseconds = Int64((seconds * Double(Self.microsecondsPerSecond)).rounded())
    }

    /// `count` samples at `rate` per second (truncated: AAC's 1024 at 44.1 kHz are 23 219 µs).
    init(samples count: Int64, rate: Int) {
        microseconds = count * Self.microsecondsPerSecond / Int64(rate)
    }

    static let zero = MediaTime(microseconds: 0)
    /// The unit's scale: what the edges (libav time bases, FLV milliseconds, 90 kHz, sample
    /// counts) convert with.
    static let microsecondsPerSecond: Int64 = 1_000_000

    static func microseconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value) }
    static func milliseconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value * 1000) }
    static func seconds(_ value: Int64) -> MediaTime { MediaTime(microseconds: value * microsecondsPerSecond) }

    /// The span as a `Duration` (for waits).
    var duration: Duration { .microseconds(microseconds) }

    /// Seconds, for messages and figures.
    var seconds: Double { Double(microseconds) / 1e6 }

    var description: String { "\(seconds) s" }

    static func < (a: MediaTime, b: MediaTime) -> Bool { a.microseconds < b.microseconds }
    static func + (a: MediaTime, b: MediaTime) -> MediaTime { MediaTime(microseconds: a.microseconds + b.microseconds) }
    static func - (a: MediaTime, b: MediaTime) -> MediaTime { MediaTime(microseconds: a.microseconds - b.microseconds) }
}
