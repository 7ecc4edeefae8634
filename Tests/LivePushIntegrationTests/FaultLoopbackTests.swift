import Foundation
import LivePushLoopback
import XCTest

/// The fault-injecting loopback with real publishers (the ffmpeg CLI) and, in relay mode, a real
/// upstream server (nginx-rtmp). Every process run has a timeout; every loopback and nginx is
/// stopped by the test that started it.
final class FaultLoopbackTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(ProcessRunner.which("ffmpeg") != nil, "ffmpeg not installed")
        scratch = try TestMedia.makeTemporaryDirectory(prefix: "fault-loopback")
    }

    override func tearDown() {
        if let scratch { TestMedia.removeTemporaryDirectory(scratch) }
    }

    private func requireNginx() throws -> NginxRTMPServer {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        return try NginxRTMPServer()
    }

    /// Starts a loopback and a task that collects its events until it stops.
    private func startLoopback(_ specs: [String], upstream: String? = nil, record: Bool = false) throws
        -> (FaultLoopback, Task<[LoopbackEvent], Never>) {
        let rules = try specs.map { try FaultSpec.parse($0) }
        let loopback = FaultLoopback(configuration: .init(
            upstream: upstream, recordDirectory: record ? scratch.path : nil, faults: rules))
        let events = loopback.makeEventStream()
        try loopback.start()
        let collector = Task {
            var all: [LoopbackEvent] = []
            for await event in events { all.append(event) }
            return all
        }
        return (loopback, collector)
    }

    /// Stops the loopback and returns every event it reported, as text.
    private func finish(_ loopback: FaultLoopback, _ collector: Task<[LoopbackEvent], Never>) async -> [String] {
        loopback.stop()
        return await collector.value.map(\.description)
    }

    /// Publishes the 4 s H.264/AAC sample with stream copy, as fast as the server accepts.
    /// With `realTime`, at the pace of the media (`-re`): ffmpeg is still writing 4 s later.
    private static func ffmpegPublish(_ url: String, realTime: Bool = false, timeout: TimeInterval = 20) async throws -> ProcessRunner.Result {
        try await ProcessRunner.runAsync("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error",
        ] + (realTime ? ["-re"] : []) + [
            "-i", TestMedia.path(.h264AAC), "-c", "copy", "-f", "flv", url,
        ], timeout: timeout)
    }

    // MARK: Relay mode (nginx-rtmp upstream)

    func testRelayWithoutFaultsDeliversTheWholeStream() async throws {
        let nginx = try requireNginx()
        defer { nginx.stop() }
        let (loopback, collector) = try startLoopback([], upstream: nginx.url(stream: "x"))
        defer { loopback.stop() }

        let result = try await Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/relayed")
        XCTAssertTrue(result.succeeded, result.summary)
        let recording = try await nginx.awaitRecording(stream: "relayed", timeout: 15)
        let probe = try FFProbe.run(recording)
        XCTAssertEqual(probe.duration ?? 0, 4.0, accuracy: 0.3, "nginx recorded the whole 4 s sample")
        XCTAssertNotNil(probe.videoStream)
        XCTAssertNotNil(probe.audioStream)
        probe.assertWellFormed()

        let events = await finish(loopback, collector)
        XCTAssertTrue(events.contains("connection 1: upstream connected"), "\(events)")
        XCTAssertFalse(events.contains { $0.contains("fault") }, "\(events)")
    }

    func testRelayRefusesTwiceThenSucceeds() async throws {
        let nginx = try requireNginx()
        defer { nginx.stop() }
        let (loopback, collector) = try startLoopback(["refuse@conn=1-2"], upstream: "127.0.0.1:\(nginx.port)")
        defer { loopback.stop() }
        let url = "rtmp://127.0.0.1:\(loopback.port)/live/third"

        for attempt in 1...2 {
            let refused = try await Self.ffmpegPublish(url)
            XCTAssertFalse(refused.timedOut, refused.summary)
            XCTAssertFalse(refused.succeeded, "attempt \(attempt) must fail: \(refused.summary)")
        }
        let accepted = try await Self.ffmpegPublish(url)
        XCTAssertTrue(accepted.succeeded, accepted.summary)
        _ = try await nginx.awaitRecording(stream: "third", timeout: 15)

        let events = await finish(loopback, collector)
        XCTAssertEqual(events.filter { $0.hasSuffix("fault refuse@conn=1-2") }.count, 2, "\(events)")
        XCTAssertEqual(events.filter { $0.hasSuffix("upstream connected") }, ["connection 3: upstream connected"],
                       "refused connections never reach the upstream")
    }

    func testRelayResetAfterBytesBreaksThePublish() async throws {
        let nginx = try requireNginx()
        defer { nginx.stop() }
        let (loopback, collector) = try startLoopback(["reset-after-bytes=100k@conn=1"], upstream: "127.0.0.1:\(nginx.port)")
        defer { loopback.stop() }

        // In real time, so that ffmpeg is still sending when the reset comes (a fast publish of
        // the small sample would be in kernel buffers, and ffmpeg gone, before that).
        let result = try await Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/cut", realTime: true)
        XCTAssertFalse(result.timedOut, result.summary)
        XCTAssertFalse(result.succeeded, "the 271 kB sample cannot get through a reset at 100 kB: \(result.summary)")
        // What nginx got is cut short.
        let recording = try await nginx.awaitRecording(stream: "cut", timeout: 15)
        let size = (try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0
        XCTAssertLessThan(size, 100 * 1024, "no more than the bytes let through")

        let events = await finish(loopback, collector)
        XCTAssertTrue(events.contains { $0.hasPrefix("connection 1: closed (reset by fault reset-after-bytes=102400@conn=1") }, "\(events)")
    }

    func testRelayStallFreezesThePublisher() async throws {
        let nginx = try requireNginx()
        defer { nginx.stop() }
        // Stall once the client has sent its first command (connect): nothing more gets through.
        let (loopback, collector) = try startLoopback(["stall@messages=1"], upstream: "127.0.0.1:\(nginx.port)")
        defer { loopback.stop() }

        let result = try await Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/frozen", timeout: 4)
        XCTAssertTrue(result.timedOut, "ffmpeg must not finish while the loopback stalls: \(result.summary)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: nginx.recordingPath(stream: "frozen")),
                       "the publish never reached nginx")
        let events = await finish(loopback, collector)
        XCTAssertTrue(events.contains("connection 1: fault stall@messages=1"), "\(events)")
    }

    func testRelayRejectPublishIsAnsweredByTheLoopback() async throws {
        let nginx = try requireNginx()
        defer { nginx.stop() }
        let (loopback, collector) = try startLoopback(["reject-publish=badname"], upstream: "127.0.0.1:\(nginx.port)")
        defer { loopback.stop() }

        let result = try await Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/bad")
        XCTAssertFalse(result.timedOut, result.summary)
        XCTAssertFalse(result.succeeded, result.summary)
        XCTAssertTrue(result.stderrString.contains("Bad stream name"), result.summary)
        let events = await finish(loopback, collector)
        XCTAssertTrue(events.contains("connection 1: fault reject-publish=badname"), "\(events)")
        XCTAssertFalse(events.contains { $0.hasSuffix("upstream connected") }, "answered locally: \(events)")
    }

    // MARK: Terminating mode

    func testRejectConnect() async throws {
        let (loopback, collector) = try startLoopback(["reject-connect"])
        defer { loopback.stop() }
        let result = try await Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/nope")
        XCTAssertFalse(result.timedOut, result.summary)
        XCTAssertFalse(result.succeeded, result.summary)
        XCTAssertTrue(result.stderrString.lowercased().contains("rejected"), result.summary)
        let events = await finish(loopback, collector)
        XCTAssertTrue(events.contains { $0.hasPrefix("connection 1: closed (connect rejected by fault reject-connect") }, "\(events)")
        XCTAssertFalse(events.contains { $0.hasPrefix("publish started") }, "\(events)")
    }

    func testThrottleSetsALowerBoundOnTheTransferTime() async throws {
        let rate = 100 * 1024
        let (loopback, collector) = try startLoopback(["throttle=100k"], record: true)
        defer { loopback.stop() }
        let started = Date()
        async let publish = Self.ffmpegPublish("rtmp://127.0.0.1:\(loopback.port)/live/slow", timeout: 25)
        let summary = try await loopback.waitForPublishEnd(stream: "slow", timeout: .seconds(25))
        let elapsed = Date().timeIntervalSince(started)
        let result = try await publish
        XCTAssertFalse(result.timedOut, result.summary)
        let events = await finish(loopback, collector)
        // Unthrottled, the 271 kB sample arrives in a fraction of a second; throttled, the media
        // payload that arrived (less than what went over the wire) needed at least bytes / rate.
        // ffmpeg closes as soon as its last write is in the kernel; what the throttle had not
        // read by then is cut off when NIO sees the close (a documented loopback limitation).
        XCTAssertGreaterThan(summary.bytes, 50_000, "\(summary) \(events)")
        let lowerBound = Double(summary.bytes) / Double(rate)
        XCTAssertGreaterThanOrEqual(elapsed, lowerBound - 0.2, "\(summary.bytes) bytes at \(rate) B/s")
        XCTAssertNotNil(summary.recordingPath)
        XCTAssertTrue(events.contains("connection 1: fault throttle=102400"), "\(events)")
    }
}
