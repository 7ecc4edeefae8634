import Foundation
import LivePush
import LivePushLoopback
import Synchronization
import XCTest

/// Records the info delegate's bitrate callbacks.
private final class BitrateRecorder: LivePusherInfoDelegate {
    let changes = Mutex<[(Int, Int)]>([])
    func pusher(_ pusher: LivePusher, videoBitrateChangedFrom old: Int, to new: Int) {
        changes.withLock { $0.append((old, new)) }
    }
}

/// Adaptive bitrate over a real link: the loopback throttles, the encoder steps down toward
/// the minimum, and steps back up toward the target once the link is fast again.
final class AdaptiveBitrateTests: XCTestCase {
    private var loopback: FaultLoopback?
    private var record: URL!

    override func setUpWithError() throws {
        record = try TestMedia.makeTemporaryDirectory(prefix: "adaptive")
    }

    override func tearDown() {
        loopback?.stop()
        loopback = nil
        if let record { TestMedia.removeTemporaryDirectory(record) }
    }

    private func bitrateChanges(_ events: [PushEvent]) -> [(from: Int, to: Int)] {
        events.compactMap { if case .videoBitrateChanged(let from, let to) = $0 { (from, to) } else { nil } }
    }

    /// A terminating loopback that lets 20 kB/s through: a link far slower than the stream.
    private func startThrottledLoopback() throws -> FaultLoopback {
        let loopback = FaultLoopback(configuration: .init(recordDirectory: record.path,
                                                          faults: [try FaultSpec.parse("throttle=20k")]))
        _ = try loopback.start()
        self.loopback = loopback
        return loopback
    }

    func testBitrateStepsDownUnderThrottleAndBackUp() async throws {
        let loopback = try startThrottledLoopback()

        var config = PushConfig()
        config.pacing = .realTime
        config.looping = .forever
        config.statsInterval = .milliseconds(200)
        config.sendQueueMaxDuration = .seconds(4)
        // A small socket buffer makes the backlog show in the send queue within seconds.
        config.socketSendBufferBytes = 16 * 1024
        // On loopback the kernel reopens a closed receive window only once 64 KiB (the loopback
        // MSS) have been read: at 20 kB/s that is over 3 s without an acknowledgement, as long
        // as the default send timeout. A real link that slow acknowledges every segment.
        config.sendDataTimeout = .seconds(10)
        config.media.encodeVideo = true
        config.media.videoBitrateKbps = 800
        config.media.minVideoBitrateKbps = 200
        let pusher = LivePusher(config: config)
        let recorder = BitrateRecorder()
        pusher.infoDelegate = recorder
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(loopback.port)/live/adaptive")
        defer { try? pusher.stop() }

        // An upper bound: typically 3-5 s; once in CI the queue took over 20 s to show the backlog.
        try await events.await("networkPoor", timeout: .seconds(45)) { $0.name == "networkPoor" }
        try await events.await("a step down") { if case .videoBitrateChanged(let f, let t) = $0 { t < f } else { false } }
        // Still throttled: it keeps stepping down, to the minimum at most.
        try await events.await("a second step down", timeout: .seconds(10)) { event in
            if case .videoBitrateChanged(let f, let t) = event { t < f && f < 800 } else { false }
        }
        loopback.setFaults([try FaultSpec.parse("throttle=10m")])
        try await events.await("networkRecovered", timeout: .seconds(30)) { $0.name == "networkRecovered" }
        try await events.await("a step up", timeout: .seconds(10)) { if case .videoBitrateChanged(let f, let t) = $0 { t > f } else { false } }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }

        let all = await events.all
        let changes = bitrateChanges(all)
        let names = all.map(\.name)
        let poor = try XCTUnwrap(names.firstIndex(of: "networkPoor"))
        let recovered = try XCTUnwrap(names.firstIndex(of: "networkRecovered"))
        let firstChange = try XCTUnwrap(names.firstIndex(of: "videoBitrateChanged"))
        XCTAssertGreaterThan(firstChange, poor, "no change before the network was poor")
        XCTAssertEqual(changes.first?.from, 800)
        XCTAssertEqual(changes.first?.to, 560, "a 30% step down")
        XCTAssertTrue(changes.allSatisfy { $0.to >= 200 && $0.to <= 800 }, "within min and target: \(changes)")
        let afterRecovery = all[recovered...].compactMap { if case .videoBitrateChanged(let f, let t) = $0 { t > f } else { nil } }
        XCTAssertEqual(afterRecovery.first, true, "the first change after recovery is a step up")
        XCTAssertFalse(names.contains("connectionLost"), "a slow network is not a lost one: \(all.compactMap { if case .connectionLost(let e) = $0 { e.description } else { nil } })")

        guard case .stopped(let stats) = all.last(where: { $0.name == "stopped" }) else { return XCTFail("no stopped") }
        XCTAssertEqual(stats.pipeline.bitrateChanges, changes.count, "every change counted in the stats")
        XCTAssertEqual(stats.pipeline.encoderBitrate, (changes.last?.to ?? 0) * 1000, "the encoder runs at the last reported rate")
        config.callbackQueue.sync {}  // the delegate runs on the callback queue: let it catch up
        XCTAssertEqual(recorder.changes.withLock { $0.map(\.1) }, changes.map(\.to), "the info delegate got every change")
    }

    func testStreamCopyKeepsItsBitrate() async throws {
        let loopback = try startThrottledLoopback()
        var config = PushConfig()
        config.looping = .forever
        config.statsInterval = .zero
        config.socketSendBufferBytes = 16 * 1024
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(loopback.port)/live/copy")
        defer { try? pusher.stop() }
        // The same hang guard as above: how soon the queue counts as poor depends on the machine.
        try await events.await("networkPoor", timeout: .seconds(45)) { $0.name == "networkPoor" }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }
        let all = await events.all
        XCTAssertTrue(bitrateChanges(all).isEmpty, "stream copy cannot adapt; the send queue drops instead")
    }
}
