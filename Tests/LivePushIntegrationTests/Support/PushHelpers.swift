import Foundation
import LivePush
import XCTest

/// Runs a push to completion with an upper bound on its duration, collecting every event.
struct PushRun: Sendable {
    var events: [PushEvent]
    /// When each of `events` came, since the push started (the same order).
    var eventTimes: [Duration] = []
    var error: LivePushError?
    var stats: PushStats
    var elapsed: Duration

    /// When the first event named `name` came, since the push started.
    func time(of name: String) -> Duration? {
        events.firstIndex { $0.name == name }.flatMap { eventTimes.indices.contains($0) ? eventTimes[$0] : nil }
    }

    /// The push's events but its state changes and what its server said it takes (an E-RTMP
    /// server's answer: ``PushEvent/serverCapabilities(_:)``).
    var eventNames: [String] {
        events.filter {
            switch $0 {
            case .stateChanged, .serverCapabilities: false
            default: true
            }
        }.map(\.name)
    }
}

enum PushHelpers {
    /// Pushes `file` to `url` and waits for the push to end (or fails the test after `timeout`).
    static func push(
        file: String, url: String, config: PushConfig = fastConfig(), timeout: Duration = .seconds(60),
        whilePushing: (@Sendable (LivePusher) async throws -> Void)? = nil
    ) async throws -> PushRun {
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let start = ContinuousClock.now
        try pusher.start(file: file, url: url)
        return try await collect(pusher, events, start: start, timeout: timeout, whilePushing: whilePushing)
    }

    static func collect(
        _ pusher: LivePusher, _ events: AsyncStream<PushEvent>, start: ContinuousClock.Instant, timeout: Duration,
        whilePushing: (@Sendable (LivePusher) async throws -> Void)? = nil
    ) async throws -> PushRun {
        let collected = try await withThrowingTaskGroup(of: [(PushEvent, Duration)]?.self) { group in
            group.addTask {
                var all: [(PushEvent, Duration)] = []
                for await event in events { all.append((event, ContinuousClock.now - start)) }
                return all
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            if let whilePushing {
                group.addTask {
                    try await whilePushing(pusher)
                    try await Task.sleep(for: timeout * 2)
                    return nil
                }
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        guard let collected else {
            try? pusher.stop()
            throw TimeoutError(what: "push did not end within \(timeout)")
        }
        var error: LivePushError?
        if case .failed(let e) = pusher.state { error = e }
        var stats = PushStats()
        for case .stopped(let s) in collected.map(\.0) { stats = s }
        return PushRun(events: collected.map(\.0), eventTimes: collected.map(\.1), error: error, stats: stats,
                       elapsed: ContinuousClock.now - start)
    }

    static func fastConfig() -> PushConfig {
        var config = PushConfig()
        config.pacing = .asFastAsPossible
        config.statsInterval = .zero
        return config
    }

    /// Waits for the first event matching `predicate` (bounded): a push's or a loopback's.
    static func awaitEvent<Event: Sendable>(
        _ events: AsyncStream<Event>, timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (Event) -> Bool
    ) async throws -> Event {
        try await withThrowingTaskGroup(of: Event?.self) { group in
            group.addTask {
                for await event in events where predicate(event) { return event }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let first else { throw TimeoutError(what: "event not seen within \(timeout)") }
            return first
        }
    }
}

/// Polls a condition that no event announces (a file nginx's exec creates), bounded by `timeout`.
func waitUntil(_ what: String, timeout: Duration = .seconds(15), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TimeoutError(what: what) }
        try await Task.sleep(for: .milliseconds(50))
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

extension FFProbe {
    /// Asserts what every correct recording of a push must satisfy.
    func assertWellFormed(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(dtsIsMonotonicPerStream, "timestamps go backwards", file: file, line: line)
        if videoStream != nil {
            XCTAssertTrue(firstVideoIsKeyframe, "first video frame is not a keyframe", file: file, line: line)
        }
    }
}

extension FFProbe {
    /// Seconds from the earliest presentation time to the latest end of a packet, over all
    /// streams. Unlike the container duration it means the same for MP4 (edit lists) and FLV
    /// (non-negative timestamps), so a source and its recording can be compared.
    var presentationSpan: Double {
        let starts = packets.compactMap(\.ptsTime)
        let ends = packets.compactMap { p in p.ptsTime.map { $0 + (p.durationTime ?? 0) } }
        guard let first = starts.min(), let last = ends.max() else { return 0 }
        return last - first
    }
}
