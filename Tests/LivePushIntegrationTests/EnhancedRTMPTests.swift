import Foundation
import XCTest

/// Enhanced RTMP (HEVC, AV1), received by FFmpeg's own RTMP listener in PyAV's bundled FFmpeg
/// (7 or later; Debian's 5.1 and nginx-rtmp cannot read E-RTMP): it counts and decodes what
/// arrives and copies it to Matroska, which Debian's ffprobe then reads as well.
final class EnhancedRTMPTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "EnhancedRTMPTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
    }

    func testAnHEVCFileCopiedArrivesAsHEVCWithEveryFrame() async throws {
        let source = try makeClip(codec: ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=0"], name: "hevc")
        let received = try await push(source, ["--video-codec", "copy"])
        XCTAssertEqual(received.videoCodec, "hevc")
        XCTAssertEqual(received.videoPackets, 100)
        XCTAssertEqual(received.videoDecoded, 100, "every frame decodes")
        let copy = try FFProbe.run(received.matroska)
        XCTAssertEqual(copy.videoStream?.codecName, "hevc", "Debian's ffprobe reads the copy as HEVC")
        XCTAssertEqual(copy.videoPackets.count, 100)
    }

    func testAnH264FileEncodedToHEVCArrivesAsHEVC() async throws {
        let received = try await push(try makeClip(), ["--video-codec", "hevc"])
        XCTAssertEqual(received.videoCodec, "hevc")
        XCTAssertEqual(received.videoDecoded, 100, "every frame decodes")
        XCTAssertEqual(received.audioPackets, received.audioDecoded)
    }

    func testAnH264FileEncodedToAV1ArrivesAsAV1() async throws {
        let received = try await push(try makeClip(), ["--video-codec", "av1"])
        XCTAssertTrue(["av1", "libdav1d", "libaom-av1"].contains(received.videoCodec ?? ""), "\(received.videoCodec ?? "nil")")
        XCTAssertEqual(received.videoDecoded, 100, "every frame decodes")
    }

    func testAnHEVCSourceStillGoesAsH264ByDefault() async throws {
        let source = try makeClip(codec: ["-c:v", "libx265", "-x265-params", "log-level=error"], name: "hevc-default")
        let received = try await push(source, [])
        XCTAssertEqual(received.videoCodec, "h264", "legacy RTMP unless asked for")
        XCTAssertEqual(received.videoDecoded, 100)
    }

    /// Our own receiver reads the connect command: an E-RTMP push announces its codec in
    /// `fourCcList`, a legacy one announces nothing; the frames are counted either way.
    func testTheConnectCommandCarriesFourCcList() async throws {
        let source = try makeClip(codec: ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=0"], name: "hevc-connect")
        for (arguments, fourCC, announced) in [(["--video-codec", "copy"], "hvc1", ["hvc1"]), ([], "avc1", nil)] as [([String], String, [String]?)] {
            let cli = try RunningCLI(["push", source, "--fast", "--json"] + arguments)
            defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
            let exit = await cli.awaitExit(timeout: .seconds(60))
            XCTAssertEqual(exit, 0, cli.standardError)
            let line = try XCTUnwrap(cli.output.last { $0.contains("\"received\"") })
            let received = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(received["videoFourCC"] as? String, fourCC)
            XCTAssertEqual(received["fourCcList"] as? [String], announced, line)
            XCTAssertEqual(received["videoFrames"] as? Int, 100)
        }
    }

    /// `--video-codec hevc,h264` to our own receiver, which confirms `hvc1` in its connect answer:
    /// HEVC goes (every frame), announced as a `serverCapabilities` event. (nginx, which confirms
    /// nothing, gets H.264: ERTMPNginxTests.)
    func testAPreferenceListSendsHEVCWhereTheServerConfirmsIt() async throws {
        let cli = try RunningCLI(["push", try makeClip(), "--fast", "--json", "--video-codec", "hevc,h264"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError)
        let events = cli.output.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        let capabilities = try XCTUnwrap(events.first { $0["event"] as? String == "serverCapabilities" }, "\(cli.output)")
        XCTAssertEqual(capabilities["videoFourCCs"] as? [String], ["av01", "hvc1", "vp09"])
        XCTAssertFalse(events.contains { $0["event"] as? String == "warning" })
        let received = try XCTUnwrap(events.last { $0["event"] as? String == "received" })
        XCTAssertEqual(received["videoFourCC"] as? String, "hvc1")
        XCTAssertEqual(received["videoFrames"] as? Int, 100)
    }

    /// One push, two codecs: the input's H.264 to an SRT listener, an HEVC rendition of it over
    /// Enhanced RTMP (`--output-video 1=…/hevc`).
    func testEachOutputMayHaveItsOwnCodec() async throws {
        try XCTSkipUnless(SRTListener.isAvailable, "srt-live-transmit not installed")
        let listener = try SRTListener(in: dir)
        let received = try await push(try makeClip(), ["--output-video", "1=320x240@500/hevc"], before: ["srt://127.0.0.1:\(listener.port)"])
        XCTAssertEqual(received.videoCodec, "hevc")
        XCTAssertEqual(received.videoDecoded, 100)
        XCTAssertTrue(listener.awaitExit(timeout: 10))
        let ts = try ReceivedTS(listener.outputPath)
        XCTAssertEqual(ts.videoCodec, "h264")
        XCTAssertEqual(ts.videoFrames, 100)
    }

    /// `--audio-codec opus`: Enhanced RTMP v2's `Opus` audio (the push's one Opus encode, after
    /// the clock), announced in `fourCcList`; FFmpeg 8 reads it and decodes every packet, and
    /// the video is still the copy. Both paces.
    func testOpusAudioArrivesAsOpusAtBothPaces() async throws {
        let source = try makeClip()
        for fast in [true, false] {
            let received = try await push(source, ["--audio-codec", "opus"], fast: fast)
            XCTAssertEqual(received.audioCodec.map { $0.contains("opus") }, true, "\(received.audioCodec ?? "nil") (fast: \(fast))")
            // 4 s of 20 ms Opus frames.
            XCTAssertGreaterThanOrEqual(received.audioPackets, 195, "fast: \(fast)")
            XCTAssertEqual(received.audioDecoded, received.audioPackets, "every Opus packet decodes (fast: \(fast))")
            XCTAssertEqual(received.videoCodec, "h264")
            XCTAssertEqual(received.videoDecoded, 100, "fast: \(fast)")
        }
    }

    // MARK: - Helpers

    private struct Received {
        var videoCodec: String?
        var audioCodec: String?
        var videoPackets = 0, videoDecoded = 0, audioPackets = 0, audioDecoded = 0
        var matroska: String
    }

    /// A 4 s, 25 fps, 320x240 clip with a 300 Hz tone: H.264 unless `codec` says otherwise.
    private func makeClip(codec: [String] = ["-c:v", "libx264", "-preset", "ultrafast"], size: String = "320x240", seconds: Int = 4,
                          name: String = "h264") throws -> String {
        let path = dir.appendingPathComponent("\(name).mp4").path
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=25:d=\(seconds)",
                                                   "-f", "lavfi", "-i", "sine=frequency=300:duration=\(seconds)", "-g", "25"] + codec
                                                  + ["-c:a", "aac", "-shortest", path], timeout: 120)
        try XCTSkipUnless(made.succeeded, "ffmpeg cannot make the clip: \(made.summary)")
        return path
    }

    /// Pushes `source` (`--fast`) to FFmpeg's listener and returns what it reported.
    private func push(_ source: String, _ arguments: [String], before: [String] = [], fast: Bool = true) async throws -> Received {
        try await pushReport(source, arguments, before: before, fast: fast).received
    }

    /// Pushes `source` (`--fast`) to FFmpeg's listener and returns what it reported, with its whole report.
    private func pushReport(_ source: String, _ arguments: [String], before: [String] = [], fast: Bool = true) async throws -> (received: Received, report: [String: Any]) {
        let python = try PythonTools.python(with: ["av"])
        let script = TestMedia.repositoryRoot.appendingPathComponent("Tests/LivePushIntegrationTests/Support/ertmp_listener.py").path
        let port = try NginxRTMPServer.freeLoopbackPort()
        let matroska = dir.appendingPathComponent("received-\(port).mkv").path
        let listener = try RunningCLI(executable: python, [script, "rtmp://127.0.0.1:\(port)/live/x", matroska])
        defer { if listener.isRunning { kill(listener.processIdentifier, SIGKILL) } }
        try await awaitListening(port: port)
        let cli = try RunningCLI(["push", source] + before + ["rtmp://127.0.0.1:\(port)/live/x", "--json"] + (fast ? ["--fast"] : [])
                                 + arguments)
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(90))
        XCTAssertEqual(exit, 0, cli.standardError)
        _ = await listener.awaitExit(timeout: .seconds(20))
        let line = try XCTUnwrap(listener.output.last { $0.hasPrefix("{") }, "the listener said nothing: \(listener.standardError)")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        print("EnhancedRTMPTests \(arguments): \(line)")
        let codecs = report["codecs"] as? [String: String] ?? [:]
        let packets = report["packets"] as? [String: Int] ?? [:]
        let decoded = report["decoded"] as? [String: Int] ?? [:]
        XCTAssertEqual(report["errors"] as? [String], [], "no decode errors")
        return (Received(videoCodec: codecs["video"], audioCodec: codecs["audio"], videoPackets: packets["video"] ?? 0, videoDecoded: decoded["video"] ?? 0,
                         audioPackets: packets["audio"] ?? 0, audioDecoded: decoded["audio"] ?? 0, matroska: matroska), report)
    }

    /// Waits (bounded) until something listens on TCP `port` of 127.0.0.1, without connecting:
    /// FFmpeg's listener takes one connection only.
    private func awaitListening(port: UInt16) async throws {
        let needle = String(format: ":%04X", port)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
            let listening = table.split(separator: "\n").contains { row in
                let fields = row.split(separator: " ")
                return fields.count > 3 && fields[1].hasSuffix(needle) && fields[3] == "0A"
            }
            if listening { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw XCTSkip("FFmpeg's RTMP listener did not start on port \(port)")
    }
}
