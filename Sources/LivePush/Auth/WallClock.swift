/// The wall-clock time that URL expiry is measured against, in Unix seconds.
///
/// auth_key and token expiry are wall-clock times, so this is not a monotonic clock.
/// Production code uses ``SystemWallClock``; tests use a manual clock to move time
/// without waiting.
public protocol WallClock: Sendable {
    /// Seconds since 1970-01-01 00:00:00 UTC.
    var now: Int64 { get }
    /// Microseconds since 1970-01-01 00:00:00 UTC (wall-clock blackouts are placed with it).
    var nowMicroseconds: Int64 { get }
}

extension WallClock {
    public var nowMicroseconds: Int64 { now * 1_000_000 }
}
