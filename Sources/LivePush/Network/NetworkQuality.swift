/// How good a WebRTC output's uplink is, rated from what the peer's RTCP receiver reports say
/// (the interactive mode's `onPusherNetworkQualityChanged`).
public enum NetworkQuality: String, Sendable, Comparable, CaseIterable {
    /// Loss under 1 %, round trip under 100 ms, jitter under 20 ms.
    case excellent
    /// Loss under 3 %, round trip under 200 ms, jitter under 50 ms.
    case good
    /// Loss under 8 %, round trip under 400 ms, jitter under 100 ms.
    case poor
    /// Worse than poor.
    case bad
    /// No report from the peer for 5 s.
    case down

    /// The thresholds, documented in docs/transports.md (Interactive mode): the worst of loss, round trip and jitter rates
    /// the link. Loss: < 1 % excellent, < 3 % good, < 8 % poor, else bad. Round trip: < 100 ms,
    /// < 200 ms, < 400 ms. Jitter: < 20 ms, < 50 ms, < 100 ms. No report for 5 s: down.
    static func rate(fractionLost: Double, roundTrip: Double, jitter: Double) -> NetworkQuality {
        func grade(_ value: Double, _ limits: (Double, Double, Double)) -> NetworkQuality {
            value < limits.0 ? .excellent : value < limits.1 ? .good : value < limits.2 ? .poor : .bad
        }
        return max(grade(fractionLost, (0.01, 0.03, 0.08)), grade(roundTrip, (0.1, 0.2, 0.4)), grade(jitter, (0.02, 0.05, 0.1)))
    }

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// Turns receiver reports into quality changes, with hysteresis: a new rating is reported once
/// two reports in a row say it (reports come about once a second), so that one lost burst does
/// not flap the rating. A link that sends no report for `silence` is down at once.
struct NetworkQualityRater: Sendable {
    static let silence: Int64 = 5_000_000

    private(set) var quality: NetworkQuality?
    private var candidate: (quality: NetworkQuality, count: Int)?
    private var lastReport: Int64?

    /// A report at `now` (µs); returns the new quality when it changed.
    mutating func report(fractionLost: Double, roundTrip: Double, jitter: Double, now: Int64) -> NetworkQuality? {
        lastReport = now
        return propose(NetworkQuality.rate(fractionLost: fractionLost, roundTrip: roundTrip, jitter: jitter), needed: 2)
    }

    /// No report at `now`: down once the last one is older than ``silence``.
    mutating func noReport(now: Int64, since start: Int64) -> NetworkQuality? {
        guard now - (lastReport ?? start) >= Self.silence else { return nil }
        return propose(.down, needed: 1)
    }

    private mutating func propose(_ rating: NetworkQuality, needed: Int) -> NetworkQuality? {
        guard rating != quality else {
            candidate = nil
            return nil
        }
        let count = candidate?.quality == rating ? candidate!.count + 1 : 1
        candidate = (rating, count)
        guard count >= needed || quality == nil else { return nil }
        quality = rating
        candidate = nil
        return rating
    }
}
