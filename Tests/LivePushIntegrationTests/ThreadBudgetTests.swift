import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The threads pushes cost, counted by name in /proc (every thread LivePush starts is named
/// `livepush.<role>`): real-time pushes from files share the pacing threads and the send loops,
/// so their number does not grow with the pushes. A recording's writes, a detector's frames and
/// the music's decoding are jobs on bounded pools shared by every push, with no thread waiting
/// for them. Connecting and closing threads live only while they connect or close.
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

    /// Bytes in a file so far (0 before it exists; a missing file is what the wait is for).
    private static func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Threads that live as long as the process, shared by every push: at most one per core
    /// (two at least) for pacing and for sending.
    private static let sharedRoles: Set<String> = ["livepush.pacing", "livepush.send"]

    func testPushesShareThePacingAndSendThreadsAndTheirOwnThreadsEndWithThem() async throws {
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
        for index in 0..<12 {
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
        // The connect threads end once their connections are handed to the send loops.
        try await waitUntil("the connect threads ended", timeout: .seconds(10)) {
            Self.started(since: before)["livepush.conn"] == nil
        }
        let cores = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let running = Self.started(since: before)
        // The recording's writes are jobs on the recording workers: a worker lives while they come.
        XCTAssertTrue(running.filter { !Self.sharedRoles.contains($0.key) }.allSatisfy { $0.key == "livepush.record" },
                      "12 pushes, one of them to two destinations, one recording: no thread of their own: \(running)")
        XCTAssertLessThanOrEqual(running["livepush.record"] ?? 0, 1, "\(running)")
        // Counted among the threads started meanwhile: a thread that libav or x264 starts from a
        // pacing thread (an earlier test's encoder) inherits its name.
        XCTAssertLessThanOrEqual(running["livepush.pacing"] ?? 0, cores, "\(running)")
        XCTAssertLessThanOrEqual(running["livepush.send"] ?? 0, cores, "\(running)")

        for (pusher, events) in zip(pushers, streams) {
            try pusher.stop()
            _ = try await PushHelpers.awaitEvent(events) { if case .stopped = $0 { true } else { false } }
        }
        // A thread's exit has no event to wait for: poll it, bounded.
        try await waitUntil("every thread of the pushes ended", timeout: .seconds(10)) {
            Self.started(since: before).filter { !Self.sharedRoles.contains($0.key) }.isEmpty
        }
    }

    /// Pushes that record, detect and play music (before: a writer, a detector thread and a
    /// decoder thread each, which waited for work most of the time). Their jobs share the
    /// pools' threads (two writers, a detector thread per core, two decoders), which end when
    /// the pushes do.
    func testRecordingDetectorAndMusicShareBoundedPoolsInsteadOfThreadsOfTheirOwn() async throws {
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let port = try receiver.start()
        defer { receiver.stop() }
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "pools")
        defer { TestMedia.removeTemporaryDirectory(directory) }
        let music = try BGMTestMedia.tone(in: directory, hz: 1000, seconds: 30, name: "music.wav")
        let before = Self.livePushThreads()

        let pushes = 4
        var pushers: [LivePusher] = []
        var streams: [AsyncStream<PushEvent>] = []
        var detectors: [RecordingDetector] = []
        for index in 0..<pushes {
            var config = PushConfig()
            config.looping = .forever
            config.statsInterval = .zero
            config.recordPath = directory.appendingPathComponent("copy\(index).flv").path
            let pusher = LivePusher(config: config)
            let detector = RecordingDetector()
            pusher.setDetector(detector)
            let events = pusher.events()
            try pusher.startBGM(source: music)
            try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(port)/live/pool\(index)")
            _ = try await PushHelpers.awaitEvent(events) { if case .pushStarted = $0 { true } else { false } }
            pushers.append(pusher)
            streams.append(events)
            detectors.append(detector)
        }
        // Every push under way: its detector has seen frames and its recording has grown.
        try await waitUntil("every detector saw frames and every recording grew", timeout: .seconds(30)) {
            detectors.allSatisfy { $0.corners.withLock { $0.count } >= 25 }
                && (0..<pushes).allSatisfy { Self.fileSize(directory.appendingPathComponent("copy\($0).flv").path) > 100_000 }
        }
        let cores = max(2, ProcessInfo.processInfo.activeProcessorCount)
        var most: [String: Int] = [:]
        // Sampled while they run (a second's worth), the most of each role.
        for _ in 0..<10 {
            for (role, count) in Self.started(since: before) { most[role] = max(most[role] ?? 0, count) }
            try await Task.sleep(for: .milliseconds(100))
        }
        print("threads while \(pushes) pushes record, detect and play music: \(most.sorted { $0.key < $1.key })")
        XCTAssertLessThanOrEqual(most["livepush.record"] ?? 0, 2, "\(most)")
        XCTAssertLessThanOrEqual(most["livepush.detect"] ?? 0, cores, "\(most)")
        XCTAssertLessThanOrEqual(most["livepush.audio"] ?? 0, 2, "\(most)")
        XCTAssertNil(most["livepush.fetch"], "local music is not fetched: \(most)")
        XCTAssertNil(most["livepush.source"], "real-time pushes from files have no producer thread: \(most)")

        for (pusher, events) in zip(pushers, streams) {
            try pusher.stop()
            _ = try await PushHelpers.awaitEvent(events) { if case .stopped = $0 { true } else { false } }
        }
        // A thread's exit has no event to wait for: poll it, bounded (idle workers exit after 2 s).
        try await waitUntil("the pools' threads ended", timeout: .seconds(10)) {
            Self.started(since: before).keys.allSatisfy { !["livepush.record", "livepush.detect", "livepush.audio"].contains($0) }
        }
    }

    func testAnInputThatCanWaitForItsWriterGetsAProducerThreadOfItsOwn() async throws {
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let port = try receiver.start()
        defer { receiver.stop() }
        let before = Self.livePushThreads()
        let input = try FrameInput(video: .init(width: 320, height: 240, frameRate: 25), audio: nil)
        let pusher = LivePusher(config: PushConfig())
        let events = pusher.events()
        try pusher.start(source: input, url: "rtmp://127.0.0.1:\(port)/live/fed")
        _ = try await PushHelpers.awaitEvent(events) { if case .pushStarted = $0 { true } else { false } }
        XCTAssertEqual(Self.started(since: before)["livepush.source"], 1)
        try pusher.stop()
        _ = try await PushHelpers.awaitEvent(events) { if case .stopped = $0 { true } else { false } }
        try await waitUntil("the producer thread ended", timeout: .seconds(10)) {
            Self.started(since: before)["livepush.source"] == nil
        }
    }
}
