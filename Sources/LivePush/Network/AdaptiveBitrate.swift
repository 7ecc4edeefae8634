/// Steps the video encoder's bitrate down toward the minimum while the network is poor and
/// back up toward the target once it recovers (the reference SDK's auto bitrate).
///
/// Down steps are large and immediate (a congested link needs relief now); up steps are
/// smaller and spaced, so that a link that only just recovered is probed, not flooded.
struct AdaptiveBitrate: Sendable, Equatable {
    let target: Int
    let minimum: Int
    private(set) var current: Int
    private(set) var isCongested = false
    private var lastChange: Int64?

    static let downFactor = 0.7
    static let upFactor = 1.25
    /// Microseconds between two steps in the same direction.
    static let hold: Int64 = 2_000_000

    init(target: Int, minimum: Int, initial: Int) {
        self.target = target
        self.minimum = min(minimum, target)
        current = min(max(initial, self.minimum), target)
    }

    /// The network became poor: the new bitrate if it changes.
    mutating func networkPoor(now: Int64) -> Int? {
        isCongested = true
        return step(down: true, now: now)
    }

    mutating func networkRecovered(now: Int64) -> Int? {
        isCongested = false
        return step(down: false, now: now)
    }

    /// Called about once a second: keeps stepping while the condition lasts.
    mutating func tick(now: Int64) -> Int? {
        guard held(now) else { return nil }
        return step(down: isCongested, now: now)
    }

    private mutating func step(down: Bool, now: Int64) -> Int? {
        let next: Int
        if down {
            next = max(minimum, Self.roundedToKbps(Double(current) * Self.downFactor))
        } else {
            guard held(now) else { return nil }
            next = min(target, Self.roundedToKbps(Double(current) * Self.upFactor))
        }
        guard next != current else { return nil }
        current = next
        lastChange = now
        return next
    }

    /// Whether the last change is at least `hold` old.
    private func held(_ now: Int64) -> Bool {
        lastChange.map { now - $0 >= Self.hold } ?? true
    }

    private static func roundedToKbps(_ value: Double) -> Int { Int((value / 1000).rounded()) * 1000 }
}
