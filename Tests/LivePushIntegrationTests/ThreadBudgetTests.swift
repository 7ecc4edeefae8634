import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The threads a push costs, counted by name in /proc (every thread LivePush starts is named
/// `livepush.<role>`): a stream-copy push to one destination runs a producer and a sender, each
/// further destination a sender, a recording a writer; all of them end with the push.
final class ThreadBudgetTests: XCTestCase {
    /// The threads LivePush started, by thread id: `livepush.<role>`.
    private static func livePushThreads() -> [String: String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var names: [String: String] = [:]
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { continue }
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.hasPrefix("livepush.") { names[task] = trimmed }
        }
        return names
    }

    /// Roles of the threads that were not there `before` (earlier tests' threads may still be ending).
    private static func started(since before: [String: String]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for (task, name) in livePushThreads() where before[task] == nil { counts[name, default: 0] += 1 }
        return counts
    }

    func testACopyPushCostsAProducerAndOneSenderPerDestinationAndAllEndWithIt() async throws {
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let port = try receiver.start()
        defer { receiver.stop() }
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "threads")
        defer { TestMedia.removeTemporaryDirectory(directory) }
        let before = Self.livePushThreads()

        var config = PushConfig()
        config.looping = .forever
        config.statsInterval = .zero
        var pushers: [LivePusher] = []
        var streams: [AsyncStream<PushEvent>] = []
        for index in 0..<3 {
            var pushConfig = config
            if index == 2 { pushConfig.recordPath = directory.appendingPathComponent("copy.flv").path }
            let pusher = LivePusher(config: pushConfig)
            let events = pusher.events()
            let urls = (index == 1 ? ["a", "b"] : ["s\(index)"]).map { "rtmp://127.0.0.1:\(port)/live/\($0)\(index)" }
            try pusher.start(file: TestMedia.path(.h264AAC), urls: urls)
            _ = try await PushHelpers.awaitEvent(events) { if case .pushStarted = $0 { true } else { false } }
            pushers.append(pusher)
            streams.append(events)
        }
        XCTAssertEqual(Self.started(since: before), ["livepush.source": 3, "livepush.send": 4, "livepush.record": 1],
                       "3 pushes, one of them to two destinations, one recording")

        for (pusher, events) in zip(pushers, streams) {
            try pusher.stop()
            _ = try await PushHelpers.awaitEvent(events) { if case .stopped = $0 { true } else { false } }
        }
        // A thread's exit has no event to wait for: poll it, bounded.
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.started(since: before).isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(Self.started(since: before), [:], "every thread of the pushes ended")
    }
}
