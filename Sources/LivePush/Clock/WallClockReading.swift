/// The wall-clock time and the monotonic time read at one instant, once, when a push's producer
/// starts: what lets the ``OutputClock`` put a time of day (a blackout window at 10:00) on the
/// output timeline. Reading the wall clock again later would let a clock step (NTP, a manual
/// change) move a window; the monotonic time carries the reading forward instead.
struct WallClockReading: Sendable, Equatable {
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    var wall: Int64
    /// The push's monotonic time at the same instant.
    var monotonic: MediaTime
}
