import Foundation
import LivePushLoopback
import XCTest

/// A server's Enhanced RTMP v2 reconnect request (`NetConnection.Connect.ReconnectRequest`)
/// under a real push, the `livepush` CLI's: the loopback's `reconnect-request` fault sends it,
/// answering itself or relaying to nginx-rtmp. The push publishes again at the new URL, moves
/// the media there at a keyframe and closes the old connection; the receiver's recordings
/// together hold the stream with no gap. Every loopback and nginx a test starts it stops.
final class ServerReconnectTests: XCTestCase {
    private var scratch: URL!
    private var loopback: FaultLoopback?
    private var nginx: NginxRTMPServer?

    /// A stream key long enough to show that events never carry it whole.
    private let key = "sk_live_0123456789abcdef"

    override func setUpWithError() throws {
        try XCTSkipUnless(ProcessRunner.which("ffprobe") != nil, "ffprobe not installed")
        scratch = try TestMedia.makeTemporaryDirectory(prefix: "server-reconnect")
    }

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
        if let scratch { TestMedia.removeTemporaryDirectory(scratch) }
    }

    /// The loopback answers itself: two publishes (`live`, then `moved`, the tcUrl's relative
    /// form), every frame of the sample once, the second starting on a keyframe one frame after
    /// the first ends.
    func testALoopbackRequestMovesThePushWithNoGap() async throws {
        let (loopback, events) = try startLoopback(["reconnect-request=/moved@conn=1,after=1500ms"], record: true)
        let result = try await push(TestMedia.path(.h264AAC), to: "rtmp://127.0.0.1:\(loopback.port)/live/\(key)")
        let loopbackEvents = await finish(loopback, events).map(\.event.description)
        let run = CLIRun(result)
        XCTAssertEqual(result.exitCode, 0, result.stderrString)
        run.assertMovedWithoutFailure(key: key)

        let publishes = loopback.summaries().filter { $0.stream == key }.sorted { $0.publishID < $1.publishID }
        XCTAssertEqual(publishes.map(\.app), ["live", "moved"], "\(loopbackEvents)")
        guard publishes.count == 2 else { return }
        let (old, new) = (publishes[0], publishes[1])
        XCTAssertEqual(old.endReason, "FCUnpublish", "the old connection is closed as a stop closes it")
        XCTAssertEqual(new.firstVideoFrameIsKeyframe, true, "the new connection starts on a keyframe")
        XCTAssertGreaterThanOrEqual(new.sequenceHeaders, 1, "the sequence headers go first on the new connection")
        let source = try frameHashes(TestMedia.path(.h264AAC))
        XCTAssertEqual(old.videoFrames + new.videoFrames, source.count, "every frame once: \(old.videoFrames) + \(new.videoFrames)")
        let step = 1000 / 25
        let gap = (new.firstTimestampMs ?? 0) - (old.lastTimestampMs ?? 0)
        XCTAssertGreaterThanOrEqual(gap, 0, "no overlap")
        XCTAssertLessThanOrEqual(gap, step + 1, "no gap: the new connection takes the frame after the old one's last")
        XCTAssertEqual(run.stopped?["videoFramesSent"] as? Int, source.count)
        // Both recordings, read together, are the source's frames in order.
        let recorded = try [old, new].flatMap { try frameHashes(XCTUnwrap($0.recordingPath)) }
        XCTAssertEqual(recorded, source)
    }

    /// `--fast`: the switch carries the resend history over to nothing (the old connection writes
    /// all it took before its graceful close), so every frame of ten passes arrives once.
    func testAFastPushMovesWithEveryFrameOnce() async throws {
        let (loopback, events) = try startLoopback(["reconnect-request=/moved@conn=1,messages=300"], record: true)
        let binary = try XCTUnwrap(LivePushCLI.binary, "livepush executable not found")
        let result = try await ProcessRunner.runAsync(binary, ["push", TestMedia.path(.h264AAC), "rtmp://127.0.0.1:\(loopback.port)/live/\(key)",
                                                               "--fast", "--loop", "10", "--json"], timeout: 60)
        _ = await finish(loopback, events)
        XCTAssertEqual(result.exitCode, 0, result.stderrString)
        CLIRun(result).assertMovedWithoutFailure(key: key)
        let publishes = loopback.summaries().filter { $0.stream == key }.sorted { $0.publishID < $1.publishID }
        XCTAssertEqual(publishes.map(\.app), ["live", "moved"])
        XCTAssertEqual(publishes.map(\.videoFrames).reduce(0, +), 10 * (try frameHashes(TestMedia.path(.h264AAC)).count),
                       "\(publishes.map(\.videoFrames))")
        XCTAssertEqual(publishes.last?.firstVideoFrameIsKeyframe, true)
    }

    /// A tcUrl naming another host never gets the stream key: the request is refused with a
    /// warning, no second connection is made and the push goes on whole over its connection.
    func testARequestToAnotherHostIsRefusedAndThePushGoesOn() async throws {
        let (loopback, events) = try startLoopback(["reconnect-request=rtmp://localhost/moved@conn=1,after=1s"], record: true)
        let result = try await push(TestMedia.path(.h264AAC), to: "rtmp://127.0.0.1:\(loopback.port)/live/\(key)")
        let timeline = await finish(loopback, events)
        let run = CLIRun(result)
        XCTAssertEqual(result.exitCode, 0, result.stderrString)
        XCTAssertTrue(timeline.contains { if case .faultInjected = $0.event { true } else { false } }, "the request was not sent")
        XCTAssertFalse(run.names.contains("reconnectRequested"), "\(run.names)")
        let warning = try XCTUnwrap(run.events.first { $0["event"] as? String == "reconnectRequestFailed" }, "\(run.names)")
        let message = (warning["error"] as? [String: Any])?["message"] as? String ?? ""
        XCTAssertTrue(message.contains("another host"), message)
        XCTAssertFalse(result.stdoutString.contains(key), "the stream key is never printed whole")
        XCTAssertFalse(timeline.contains { if case .accepted(connection: 2) = $0.event { true } else { false } }, "a second connection was made")
        let publishes = loopback.summaries().filter { $0.stream == key }
        XCTAssertEqual(publishes.map(\.app), ["live"])
        XCTAssertEqual(publishes.first?.videoFrames, try frameHashes(TestMedia.path(.h264AAC)).count)
    }

    /// The done-when: a relay in front of nginx-rtmp sends the request with a tcUrl 5 s
    /// into a 15 s real-time push. nginx records each publish in a file of its own; together they
    /// hold ≥ 98% of the source's frames with ≤ 100 ms of media between them.
    func testAProxyInFrontOfNginxMovesTheRealTimePushWithinThreeSecondsAndNoGap() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        try XCTSkipUnless(ProcessRunner.which("ffmpeg") != nil, "ffmpeg not installed")
        let nginx = try NginxRTMPServer()
        self.nginx = nginx
        let source = scratch.appendingPathComponent("fifteen.mp4").path
        try makeFifteenSecondSource(source)
        let (loopback, events) = try startLoopback(["reconnect-request=/\(NginxRTMPServer.movedApplication)@conn=1,after=5s"],
                                                   upstream: "127.0.0.1:\(nginx.port)")
        let result = try await push(source, to: "rtmp://127.0.0.1:\(loopback.port)/\(NginxRTMPServer.application)/\(key)", timeout: 60)
        let timeline = await finish(loopback, events)
        let run = CLIRun(result)
        XCTAssertEqual(result.exitCode, 0, result.stderrString)
        run.assertMovedWithoutFailure(key: key)

        let injected = try XCTUnwrap(timeline.first { if case .faultInjected = $0.event { true } else { false } }, "\(timeline)")
        let second = try XCTUnwrap(timeline.first { if case .accepted(connection: 2) = $0.event { true } else { false } }, "no second connection")
        let delay = second.at - injected.at
        XCTAssertLessThanOrEqual(delay, .seconds(3), "the second connection came \(delay) after the request")

        for path in [nginx.recordingPath(stream: key), nginx.movedRecordingPath(stream: key)] {
            try await waitUntil("nginx closed \(path)") { FileManager.default.fileExists(atPath: path + ".done") }
        }
        let frames = try frameHashes(source)
        let old = try frameHashes(nginx.recordingPath(stream: key))
        let new = try frameHashes(nginx.movedRecordingPath(stream: key))
        let index = Dictionary(frames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let held = Set(old + new).intersection(frames).count
        XCTAssertGreaterThanOrEqual(Double(held), 0.98 * Double(frames.count), "nginx holds \(held) of \(frames.count) frames")
        let lastOld = try XCTUnwrap(old.last.flatMap { index[$0] }, "the old recording's last frame is not the source's")
        let firstNew = try XCTUnwrap(new.first.flatMap { index[$0] }, "the new recording's first frame is not the source's")
        let missing = firstNew - lastOld - 1
        XCTAssertGreaterThanOrEqual(missing, 0, "the recordings overlap (\(lastOld) then \(firstNew))")
        XCTAssertLessThanOrEqual(missing * 40, 100, "\(missing) frames (\(missing * 40) ms) between the recordings")
        print("server reconnect to nginx: second connection \(delay) after the request; frames \(old.count) + \(new.count) of \(frames.count), held \(held); gap \(missing) frames")
    }

    /// nginx-rtmp refuses a second publish of a name its application is publishing ("already
    /// publishing"): a request without a tcUrl (the same URL) cannot move the push there. It is a
    /// warning; the push goes on over its connection and ends well.
    func testNginxRefusingTheSamePublishIsAWarningAndThePushGoesOn() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer()
        self.nginx = nginx
        let (loopback, events) = try startLoopback(["reconnect-request@conn=1,after=1s"], upstream: "127.0.0.1:\(nginx.port)")
        let result = try await push(TestMedia.path(.h264AAC), to: "rtmp://127.0.0.1:\(loopback.port)/\(NginxRTMPServer.application)/\(key)")
        _ = await finish(loopback, events)
        let run = CLIRun(result)
        XCTAssertEqual(result.exitCode, 0, result.stderrString)
        XCTAssertTrue(run.names.contains("reconnectRequested"), "\(run.names)")
        let warning = try XCTUnwrap(run.events.first { $0["event"] as? String == "reconnectRequestFailed" }, "\(run.names)")
        XCTAssertEqual((warning["error"] as? [String: Any])?["name"] as? String, "reconnectRequestFailed")
        XCTAssertGreaterThanOrEqual(nginx.alreadyPublishingRefusals, 1, "nginx did not refuse the second publish")
        for failure in ["connectFailed", "connectionLost", "reconnectFailed", "sdkError"] {
            XCTAssertFalse(run.names.contains(failure), "\(run.names)")
        }
        // Not nginx's recording: the refused publish opened it again (record_unique off) and cut
        // it, whatever the first publish wrote. What went out is the whole sample, on one connection.
        XCTAssertEqual(run.stopped?["videoFramesSent"] as? Int, try frameHashes(TestMedia.path(.h264AAC)).count)
        XCTAssertEqual(run.names.filter { $0 == "pushStarted" }.count, 1, "\(run.names)")
    }

    // MARK: - Helpers

    private func startLoopback(_ specs: [String], upstream: String? = nil, record: Bool = false) throws
        -> (FaultLoopback, Task<[(event: LoopbackEvent, at: ContinuousClock.Instant)], Never>) {
        let loopback = FaultLoopback(configuration: .init(upstream: upstream, recordDirectory: record ? scratch.path : nil,
                                                          faults: try specs.map { try FaultSpec.parse($0) }))
        self.loopback = loopback
        let stream = loopback.makeEventStream()
        try loopback.start()
        let collector = Task {
            var all: [(event: LoopbackEvent, at: ContinuousClock.Instant)] = []
            for await event in stream { all.append((event, ContinuousClock.now)) }
            return all
        }
        return (loopback, collector)
    }

    private func finish(_ loopback: FaultLoopback, _ collector: Task<[(event: LoopbackEvent, at: ContinuousClock.Instant)], Never>) async
        -> [(event: LoopbackEvent, at: ContinuousClock.Instant)] {
        loopback.stop()
        return await collector.value
    }

    /// The CLI's real-time push with JSON events.
    private func push(_ file: String, to url: String, timeout: TimeInterval = 40) async throws -> ProcessRunner.Result {
        let binary = try XCTUnwrap(LivePushCLI.binary, "livepush executable not found")
        return try await ProcessRunner.runAsync(binary, ["push", file, url, "--json"], timeout: timeout)
    }

    /// 15 s of 25 fps H.264 (2 s GOPs) and AAC whose frames all differ (testsrc2 draws a clock).
    private func makeFifteenSecondSource(_ path: String) throws {
        let made = try ProcessRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", "15", "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", path,
        ], timeout: 60)
        XCTAssertTrue(made.succeeded, made.stderrString)
    }

    /// ffprobe's MD5 of each video packet's data, in decode order: the same for a frame in the
    /// source and in an FLV recording of it.
    private func frameHashes(_ path: String) throws -> [String] {
        struct Probe: Decodable {
            struct Packet: Decodable { let data_hash: String? }
            let packets: [Packet]
        }
        let result = try ProcessRunner.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=data_hash",
                                                       "-show_data_hash", "MD5", "-of", "json", path], timeout: 30)
        XCTAssertTrue(result.succeeded, result.stderrString)
        return try JSONDecoder().decode(Probe.self, from: result.stdout).packets.compactMap(\.data_hash)
    }
}

/// What a `livepush push --json` run printed.
private struct CLIRun {
    let events: [[String: Any]]

    init(_ result: ProcessRunner.Result) {
        events = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    var names: [String] { events.compactMap { $0["event"] as? String } }

    /// The final figures.
    var stopped: [String: Any]? { events.last { $0["event"] as? String == "stopped" }?["stats"] as? [String: Any] }

    /// One `reconnectRequested`, its URL without the whole key, and nothing that is a failure.
    func assertMovedWithoutFailure(key: String, file: StaticString = #filePath, line: UInt = #line) {
        let requested = events.filter { $0["event"] as? String == "reconnectRequested" }
        XCTAssertEqual(requested.count, 1, "\(names)", file: file, line: line)
        let url = requested.first?["url"] as? String ?? ""
        XCTAssertTrue(url.contains("/moved/"), url, file: file, line: line)
        XCTAssertFalse(url.contains(key), "the stream key is never printed whole: \(url)", file: file, line: line)
        XCTAssertEqual(requested.first?["group"] as? String, "network", file: file, line: line)
        for failure in ["connectFailed", "connectionLost", "reconnectStarted", "reconnectFailed", "reconnectRequestFailed", "sdkError"] {
            XCTAssertFalse(names.contains(failure), "\(failure) in \(names)", file: file, line: line)
        }
        XCTAssertEqual(names.last, "stopped", file: file, line: line)
    }
}
