import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The short CI variant of `Benchmarks/soak.py`: a real-time `.forever` push through a
/// terminating `FaultLoopback` whose faults change every few seconds (a reset, a throttle that is
/// lifted, a stall caught by the send timeout, a reset followed by two refusals). The pusher must
/// restore every lost connection by itself, never fail, keep its memory flat, stop cleanly, and
/// the last publish must arrive well-formed. About 21 s.
final class SoakTests: XCTestCase {
    func testShortSoakRecoversFromEveryFaultWithFlatMemory() async throws {
        let record = try TestMedia.makeTemporaryDirectory(prefix: "soak")
        defer { TestMedia.removeTemporaryDirectory(record) }
        let loopback = FaultLoopback(configuration: .init(recordDirectory: record.path, faults: []))
        let publishes = PublishCounter(loopback.makeEventStream())
        let port = try loopback.start()
        defer { loopback.stop() }

        var config = PushConfig()
        config.pacing = .realTime
        config.looping = .forever
        config.statsInterval = .milliseconds(250)
        config.responseTimeout = .seconds(3)
        config.connectRetryInterval = .milliseconds(200)
        config.connectRetryCount = 50
        // A stalled server must show within seconds: a small socket buffer fills quickly, and a
        // write that blocks for 1 s counts as a lost connection.
        config.socketSendBufferBytes = 32 * 1024
        config.sendDataTimeout = .milliseconds(1000)
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(port)/live/soak")
        defer { try? pusher.stop() }
        try await events.await("pushStarted", timeout: .seconds(10)) { $0.name == "pushStarted" }
        let start = ContinuousClock.now
        /// Lets the scenario run until `seconds` after the first publish (not a synchronisation).
        func runUntil(_ seconds: Double) async throws {
            let until = start + .milliseconds(Int64(seconds * 1000))
            if ContinuousClock.now < until { try await Task.sleep(until: until, clock: .continuous) }
        }
        let recovery: Duration = .seconds(20)

        // 3 s: reset the open connection; the rule names it, so the reconnect is not reset again.
        try await runUntil(3)
        var phase = EventLog(pusher.events())
        loopback.setFaults([try FaultSpec.parse("reset-after=300ms@conn=\(loopback.connectionCount)")])
        try await phase.await("connectionLost after a reset", timeout: recovery) { $0.name == "connectionLost" }
        try await phase.await("reconnectSucceeded after a reset", timeout: recovery) { $0.name == "reconnectSucceeded" }

        // 5 s: the memory baseline, with every buffer of a running push (and one reconnect) in use.
        try await runUntil(5)
        let rssAt5s = try Self.residentBytes()

        // 6 s: a link slower than the stream (~68 kB/s) for 3 s, then a normal one again.
        try await runUntil(6)
        loopback.setFaults([try FaultSpec.parse("throttle=30k")])
        try await runUntil(9)
        loopback.setFaults([])

        // 10 s: reset the open connection, and the server stops reading on the next one shortly
        // after it was accepted (before the kernel has grown its receive window, so that the
        // small send buffer fills within seconds): sendDataTimeout, lost, restored.
        try await runUntil(10)
        phase = EventLog(pusher.events())
        var n = loopback.connectionCount
        loopback.setFaults([try FaultSpec.parse("reset-after=300ms@conn=\(n)"),
                            try FaultSpec.parse("stall@after=500ms,conn=\(n + 1)")])
        try await phase.await("sendDataTimeout on a stalled server", timeout: recovery) { $0.name == "sendDataTimeout" }
        try await phase.await("reconnectSucceeded after a stall", timeout: recovery, Self.nth("reconnectSucceeded", 2))
        // Lifting the stall lets the loopback see that the abandoned connection is gone, which
        // ends its publish. Only then may the last publish start: the loopback records every
        // publish of a stream name to the same file, and a stale publish that ends later would
        // write its tail into the new recording.
        loopback.setFaults([])
        try await publishes.awaitOpen(atMost: 1, timeout: recovery)

        // ~15 s: reset the open connection and refuse the next two: three attempts, then back.
        try await runUntil(15)
        phase = EventLog(pusher.events())
        n = loopback.connectionCount
        loopback.setFaults([try FaultSpec.parse("reset-after=300ms@conn=\(n)"),
                            try FaultSpec.parse("refuse@conn=\(n + 1)-\(n + 2)")])
        try await phase.await("reconnectSucceeded after two refusals", timeout: recovery) { $0.name == "reconnectSucceeded" }
        let lastReconnect = ContinuousClock.now - start
        let attempts = await phase.all.compactMap { if case .reconnectStarted(let a) = $0 { a } else { nil } }
        XCTAssertEqual(attempts, [1, 2, 3], "two refused attempts, the third one succeeds")
        loopback.setFaults([])

        // The last publish runs clean for a while; then the memory, and a graceful stop.
        try await events.await("media flowing after the last reconnect", timeout: recovery) {
            if case .stats(let s) = $0 { s.videoFramesSent > 0 } else { false }
        }
        // At least 4 s (about 21 s in all when nothing was slow).
        try await runUntil(max(21, Double(lastReconnect.components.seconds) + 4))
        let rssAtEnd = try Self.residentBytes()
        XCTAssertEqual(pusher.state, .pushing)
        let stopAsked = ContinuousClock.now
        try pusher.stop()
        try await events.await("stopped", timeout: .seconds(10)) { $0.name == "stopped" }
        let stopTook = ContinuousClock.now - stopAsked
        XCTAssertLessThan(stopTook, .seconds(5), "stop() is prompt")
        XCTAssertEqual(pusher.state, .stopped)

        // The whole story: never failed, every loss restored, memory flat.
        let all = await events.all
        let names = all.map(\.name).filter { $0 != "stats" && $0 != "stateChanged" }
        XCTAssertFalse(names.contains("reconnectFailed"), "\(names)")
        XCTAssertFalse(all.contains { if case .stateChanged(.failed) = $0 { true } else { false } }, "\(names)")
        XCTAssertEqual(names.last, "stopped")
        var unrestored = 0
        for name in names {
            if name == "connectionLost" { unrestored += 1 }
            if name == "reconnectSucceeded" { unrestored = max(0, unrestored - 1) }
            XCTAssertLessThanOrEqual(unrestored, 1, "a connection was lost twice without a reconnect in between: \(names)")
        }
        XCTAssertEqual(unrestored, 0, "every connectionLost is followed by reconnectSucceeded: \(names)")
        let losses = names.filter { $0 == "connectionLost" }.count
        XCTAssertGreaterThanOrEqual(losses, 4, "reset; reset and stall; reset: \(names)")
        XCTAssertEqual(names.filter { $0 == "reconnectSucceeded" }.count, losses, "\(names)")
        let growth = rssAtEnd - rssAt5s
        print("soak: \(losses) connections lost and restored; RSS \(rssAt5s / 1024) KiB at 5 s, \(rssAtEnd / 1024) KiB at the end;",
              "stop took \(stopTook)")
        XCTAssertLessThan(growth, 10 * 1024 * 1024,
                          "RSS grew \(growth / 1024) KiB from \(rssAt5s / 1024) KiB between the 5 s mark and the end")

        // The last publish: the stream after the last reconnect, whole and well-formed.
        let summary = try await loopback.waitForPublishEnd(stream: "soak", timeout: .seconds(10))
        let latest = loopback.summaries().filter { $0.stream == "soak" }.map(\.publishID).max()
        XCTAssertEqual(summary.publishID, latest)
        XCTAssertEqual(summary.firstVideoFrameIsKeyframe, true, "resumes on a keyframe")
        XCTAssertTrue(summary.monotonic)
        let publishLog = loopback.summaries().map {
            "#\($0.publishID) \($0.videoFrames)v/\($0.audioFrames)a \($0.firstTimestampMs ?? -1)-\($0.lastTimestampMs ?? -1) ms (\($0.endReason))"
        }
        print("soak: publishes \(publishLog)")
        XCTAssertGreaterThan(summary.videoFrames, 25, "a few seconds of video after the last reconnect: \(publishLog)")
        XCTAssertGreaterThan(summary.firstTimestampMs ?? 0, 10_000, "timestamps continue across reconnects")
        try FFProbe.run(try XCTUnwrap(summary.recordingPath)).assertWellFormed()
    }

    /// A predicate that holds from the `count`-th event named `name` on. It counts every event
    /// it is shown, so use a fresh one per wait (`EventLog.await` shows it each event once).
    private static func nth(_ name: String, _ count: Int) -> @Sendable (PushEvent) -> Bool {
        let seen = Counter()
        return { event in event.name == name && seen.increment() >= count }
    }

    /// This process's resident set (VmRSS in /proc/self/status), in bytes.
    private static func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kib = try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
        return kib * 1024
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

/// Counts the loopback's open publishes (started, not yet ended) and waits for that number to drop.
private actor PublishCounter {
    private var open = 0
    private var waiters: [Int: (limit: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var nextID = 0

    init(_ stream: AsyncStream<LoopbackEvent>) {
        Task { await self.consume(stream) }
    }

    private func consume(_ stream: AsyncStream<LoopbackEvent>) async {
        for await event in stream {
            switch event {
            case .publishStarted: open += 1
            case .publishEnded: open -= 1
            default: continue
            }
            for (id, waiter) in waiters where open <= waiter.limit {
                waiters.removeValue(forKey: id)
                waiter.continuation.resume()
            }
        }
        for waiter in waiters.values { waiter.continuation.resume() }
        waiters.removeAll()
    }

    /// Returns once at most `limit` publishes are open; throws after `timeout`.
    func awaitOpen(atMost limit: Int, timeout: Duration) async throws {
        nextID += 1
        let id = nextID
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(id: id, limit: limit) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        if open > limit {
            throw TimeoutError(what: "still \(open) open publishes after \(timeout), expected at most \(limit)")
        }
    }

    private func wait(id: Int, limit: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if open <= limit { continuation.resume() } else { waiters[id] = (limit, continuation) }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume()
    }
}
