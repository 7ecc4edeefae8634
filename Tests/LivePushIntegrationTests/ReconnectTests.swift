import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The connection drops under a running push; LivePush reconnects by itself.
final class ReconnectTests: XCTestCase {
    private func realTimeConfig() -> PushConfig {
        var config = PushConfig()
        config.statsInterval = .milliseconds(100)
        config.looping = .forever
        config.connectRetryInterval = .milliseconds(200)
        config.connectRetryCount = 20
        return config
    }

    func testReconnectsAfterTheServerGoesAwayAndContinuesTimestamps() async throws {
        let first = RTMPReceiver(configuration: .init(port: 0))
        let port = try first.start()
        defer { first.stop() }
        let record = try TestMedia.makeTemporaryDirectory(prefix: "reconnect")
        defer { TestMedia.removeTemporaryDirectory(record) }
        let second = RTMPReceiver(configuration: .init(port: port, recordDirectory: record.path))
        defer { second.stop() }

        let pusher = LivePusher(config: realTimeConfig())
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(port)/live/again")
        defer { try? pusher.stop() }

        try await events.await("1.5 s of media sent") { if case .stats(let s) = $0 { s.mediaTimeSent >= 1_500_000 } else { false } }
        first.stop()
        try await events.await("reconnectStarted") { $0.name == "reconnectStarted" }
        let names = await events.names
        XCTAssertTrue(names.contains("connectionLost"), "\(names)")
        XCTAssertEqual(pusher.state, .reconnecting)

        _ = try second.start()
        try await events.await("reconnectSucceeded") { $0.name == "reconnectSucceeded" }
        XCTAssertEqual(pusher.state, .pushing)
        try await events.await("3.5 s of media sent") { if case .stats(let s) = $0 { s.mediaTimeSent >= 3_500_000 } else { false } }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }

        let summary = try await second.waitForPublishEnd(stream: "again", timeout: .seconds(10))
        XCTAssertEqual(summary.firstVideoFrameIsKeyframe, true, "the new connection starts on a keyframe")
        XCTAssertTrue(summary.monotonic)
        XCTAssertGreaterThanOrEqual(summary.firstTimestampMs ?? 0, 1500, "timestamps continue, no jump back to 0")
        try FFProbe.run(try XCTUnwrap(summary.recordingPath)).assertWellFormed()
    }

    func testOurOwnStopsNeverLeaveASessionBehind() async throws {
        // A server ends a publish on FCUnpublish/deleteStream at once; one that only sees the
        // socket go may hold it (and answer the next publish "already publishing").
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let port = try receiver.start()
        defer { receiver.stop() }
        let pusher = LivePusher(config: realTimeConfig())
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(port)/live/clean")
        defer { try? pusher.stop() }

        // A requested reconnect (a refreshed URL) closes the old connection cleanly too.
        try await events.await("0.5 s of media sent") { if case .stats(let s) = $0 { s.mediaTimeSent >= 500_000 } else { false } }
        try pusher.reconnect()
        try await events.await("reconnectSucceeded") { $0.name == "reconnectSucceeded" }
        try await events.await("1.5 s of media sent") { if case .stats(let s) = $0 { s.mediaTimeSent >= 1_500_000 } else { false } }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }

        let ends = try await receiver.waitForPublishEnd(stream: "clean", timeout: .seconds(10))
        let all = receiver.summaries().filter { $0.stream == "clean" }
        XCTAssertEqual(all.count, 2, "\(all.map(\.endReason))")
        XCTAssertEqual(all.map(\.endReason), ["FCUnpublish", "FCUnpublish"], "\(ends)")
    }
}

/// Collects a pusher's events and lets a test wait for one, with an upper bound.
actor EventLog {
    private var events: [PushEvent] = []
    private var waiters: [Int: (predicate: @Sendable (PushEvent) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var nextID = 0

    init(_ stream: AsyncStream<PushEvent>) {
        Task { await self.consume(stream) }
    }

    var names: [String] { events.map(\.name) }
    var all: [PushEvent] { events }

    private func consume(_ stream: AsyncStream<PushEvent>) async {
        for await event in stream {
            events.append(event)
            for (id, waiter) in waiters where waiter.predicate(event) {
                waiters.removeValue(forKey: id)
                waiter.continuation.resume(returning: true)
            }
        }
    }

    /// Returns once an event matching `predicate` has arrived (now or earlier); throws after `timeout`.
    func await(_ what: String, timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (PushEvent) -> Bool) async throws {
        nextID += 1
        let id = nextID
        let arrived = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(id: id, for: predicate) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        if !arrived { throw TimeoutError(what: "\(what) did not happen within \(timeout); events: \(names)") }
    }

    private func wait(id: Int, for predicate: @escaping @Sendable (PushEvent) -> Bool) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if events.contains(where: predicate) {
                    continuation.resume(returning: true)
                } else {
                    waiters[id] = (predicate, continuation)
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: false)
    }
}
