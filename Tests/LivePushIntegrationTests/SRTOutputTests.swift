import Foundation
import XCTest

/// SRT outputs, received by `srt-live-transmit` (the SRT project's own tool, listening) and
/// checked by decoding what it wrote: MPEG-TS with every frame. ffmpeg pushes the same file
/// on the same path in the same run, as the yardstick.
final class SRTOutputTests: NginxTestCase {
    private let clip = PlayoutClip(name: "A", color: "red", luma: 81, tone: 300)

    func testARealTimePushArrivesWithEveryFrameAndNoFewerThanFFmpegDelivers() async throws {
        let path = try clip.make(in: dir, seconds: 8)
        let ours = try SRTListener(in: dir, name: "livepush")
        let theirs = try SRTListener(in: dir, name: "ffmpeg")
        let cli = try RunningCLI(["push", path, "srt://127.0.0.1:\(ours.port)?latency=200000", "--json"])
        let ffmpeg = try RunningCLI(executable: "/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-re", "-i", path, "-c", "copy",
                                                                    "-f", "mpegts", "srt://127.0.0.1:\(theirs.port)?latency=200000"])
        defer {
            if cli.isRunning { kill(cli.processIdentifier, SIGKILL) }
            if ffmpeg.isRunning { kill(ffmpeg.processIdentifier, SIGKILL) }
        }
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        _ = await ffmpeg.awaitExit(timeout: .seconds(40))
        XCTAssertTrue(ours.awaitExit(timeout: 10), "the listener saw the connection close")
        theirs.awaitExit(timeout: 10)
        theirs.stop()

        let received = try ReceivedTS(ours.outputPath)
        let yardstick = try ReceivedTS(theirs.outputPath)
        print("SRTOutputTests: livepush \(received.videoFrames) video / \(received.audioFrames) audio, "
              + "ffmpeg \(yardstick.videoFrames) / \(yardstick.audioFrames)")
        XCTAssertEqual(received.videoCodec, "h264")
        XCTAssertEqual(received.audioCodec, "aac")
        XCTAssertEqual(received.videoFrames, 200, "every frame of 8 s at 25 fps")
        XCTAssertGreaterThanOrEqual(received.videoFrames, yardstick.videoFrames)
        XCTAssertGreaterThanOrEqual(received.audioFrames, yardstick.audioFrames)
        XCTAssertEqual(received.decodeErrors, "", "the stream decodes without an error")
        let stopped = cli.output.last { $0.contains("\"stopped\"") } ?? ""
        XCTAssertTrue(stopped.contains("\"srt\""), "the stats carry SRT's own figures: \(stopped)")
    }

    func testOnePushToNginxAndToSRTDeliversEveryFrameToBoth() async throws {
        let path = try clip.make(in: dir, seconds: 4)
        let listener = try SRTListener(in: dir)
        let cli = try RunningCLI(["push", path, server.url(stream: "both"), "srt://127.0.0.1:\(listener.port)", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 10), "the listener saw the connection close")

        let recorded = try FFProbe.run(try await server.awaitRecording(stream: "both"))
        XCTAssertEqual(recorded.videoPackets.count, 100, "nginx got every frame")
        let received = try ReceivedTS(listener.outputPath)
        XCTAssertEqual(received.videoFrames, 100, "the SRT listener got every frame: \(String(describing: received.videoSpan))")
        XCTAssertEqual(received.decodeErrors, "")
    }

    func testAnSRTListenerThatIsNotThereIsAConnectFailure() async throws {
        let port = try SRTListener.freeUDPPort()
        let cli = try RunningCLI(["push", TestMedia.path(.h264AAC), "srt://127.0.0.1:\(port)?connect_timeout=1000",
                                  "--retry-count", "0", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(20))
        XCTAssertNotEqual(exit, 0)
        XCTAssertTrue(cli.output.contains { $0.contains("connectFailed") || $0.contains("805505283") }, cli.output.joined(separator: "\n"))
    }

    func testAWrongPassphraseIsARejectedConnect() async throws {
        let listener = try SRTListener(in: dir, options: "passphrase=the-right-passphrase")
        let cli = try RunningCLI(["push", TestMedia.path(.h264AAC), "srt://127.0.0.1:\(listener.port)?passphrase=a-wrong-passphrase",
                                  "--retry-count", "0", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(20))
        XCTAssertNotEqual(exit, 0)
        let all = cli.output.joined(separator: "\n") + cli.standardError
        XCTAssertTrue(all.contains("connectRejected"), all)
        XCTAssertFalse(all.contains("a-wrong-passphrase"), "the passphrase is never printed")
    }
}

/// What an MPEG-TS file holds, by ffprobe: codecs and frames per track, and what decoding it
/// prints as errors.
struct ReceivedTS {
    var videoCodec: String?
    var audioCodec: String?
    var videoFrames: Int
    var audioFrames: Int
    var decodeErrors: String
    /// The first and last video timestamps (s), to tell a frame lost at the start from one at the end.
    var videoSpan: (first: Double, last: Double)?

    init(_ path: String) throws {
        let probe = try FFProbe.run(path)
        let times = probe.videoPackets.compactMap(\.ptsTime)
        videoSpan = times.min().map { ($0, times.max()!) }
        videoCodec = probe.videoStream?.codecName
        audioCodec = probe.audioStreams.first?.codecName
        videoFrames = probe.videoPackets.count
        audioFrames = probe.audioPackets.count
        let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-f", "null", "-"], timeout: 60)
        decodeErrors = decoded.stderrString
    }
}
