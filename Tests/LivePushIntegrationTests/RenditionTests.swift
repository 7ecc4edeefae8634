import Foundation
@testable import LivePush
import LivePushLoopback
import XCTest

/// Per-output video (`--output-video`, `PushConfig.outputVideo`): one decode after the clock,
/// one encode per distinct rendition, shared by the outputs that ask for it; outputs that ask
/// for nothing carry the input's video as it is. Checked by decoding what nginx recorded.
final class RenditionTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?
    private var directory: URL?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
        if let directory { TestMedia.removeTemporaryDirectory(directory) }
    }

    /// 8 s of 640x360 H.264 at 25 fps with a 300 Hz tone.
    private func source() throws -> String {
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "renditions")
        self.directory = directory
        return try BGMTestMedia.source(in: directory, seconds: 8, tone: 300, size: "640x360")
    }

    private func startNginx() throws -> NginxRTMPServer {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer()
        self.nginx = nginx
        return nginx
    }

    /// The case, in real time through the CLI: output 0 copied, output 1 at 320x180 and
    /// about 300 kbit/s; both whole, with the tone and continuous timestamps.
    func testOneOutputCarriesTheSourceAndTheOtherItsOwnSmallerEncode() async throws {
        let nginx = try startNginx()
        let file = try source()
        let result = try LivePushCLI.run([
            "push", file, nginx.url(stream: "full"), nginx.url(stream: "small"),
            "--output-video", "1=320x180@300", "--json",
        ], timeout: 60)
        XCTAssertEqual(result.exitCode, 0, result.summary)

        let source = try FFProbe.run(file)
        let full = try FFProbe.run(try await nginx.awaitRecording(stream: "full"))
        let small = try FFProbe.run(try await nginx.awaitRecording(stream: "small"))
        for probe in [full, small] {
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 200)
            XCTAssertEqual(probe.videoStream?.codecName, "h264")
            XCTAssertLessThanOrEqual(probe.largestVideoStep, 0.041, "continuous video timestamps")
            XCTAssertLessThanOrEqual(probe.largestAudioStep, 0.025, "continuous audio timestamps")
        }
        XCTAssertEqual(full.videoStream?.width, 640)
        XCTAssertEqual(full.videoStream?.height, 360)
        // Copied: the very frames of the source, byte counts and all.
        XCTAssertEqual(full.videoPackets.map(\.size), source.videoPackets.map(\.size))
        XCTAssertEqual(small.videoStream?.width, 320)
        XCTAssertEqual(small.videoStream?.height, 180)
        let smallKbps = Double(small.videoPackets.compactMap(\.size).reduce(0, +)) * 8 / 8 / 1000
        XCTAssertTrue((150...450).contains(smallKbps), "320x180 at \(smallKbps) kbit/s, asked 300")
        for stream in ["full", "small"] {
            let tones = try ToneAnalysis(recording: nginx.recordingPath(stream: stream))
            XCTAssertGreaterThan(tones.level(300), 0.05, "\(stream): the 300 Hz tone")
            XCTAssertGreaterThan(tones.seconds, 7.8, stream)
        }
        // The final statistics say one decode fed one encode.
        let stopped = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "stopped" }
        let stats = stopped?["stats"] as? [String: Any]
        XCTAssertEqual(stats?["renditionFramesDecoded"] as? Int, 200)
        let renditions = stats?["renditions"] as? [[String: Any]]
        XCTAssertEqual(renditions?.first?["video"] as? String, "320x180@300")
        XCTAssertEqual(renditions?.first?["framesEncoded"] as? Int, 200)
    }

    /// `--fast`, through the library: two outputs ask for one rendition and a third for another.
    /// The push decodes its video once; each rendition encodes once and the shared one feeds both.
    func testOneDecodeServesEveryRenditionAndOutputsThatAskTheSameShareAnEncode() async throws {
        let nginx = try startNginx()
        let file = try source()
        var config = PushHelpers.fastConfig()
        config.outputVideo = [1: VideoRendition(width: 320, height: 180, bitrateKbps: 300),
                              2: VideoRendition(width: 320, height: 180, bitrateKbps: 300),
                              3: VideoRendition(width: 480, height: 270, bitrateKbps: 500)]
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        try pusher.start(file: file, urls: ["copy", "a", "b", "c"].map { nginx.url(stream: $0) })
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
        XCTAssertNil(run.error, "\(run.eventNames)")

        XCTAssertEqual(run.stats.renditionFramesDecoded, 200, "one decode")
        XCTAssertEqual(run.stats.renditions.map(\.rendition.description), ["480x270@500", "320x180@300"])
        XCTAssertEqual(run.stats.renditions.map(\.outputs), [[3], [1, 2]])
        XCTAssertEqual(run.stats.renditions.map(\.framesEncoded), [200, 200], "one encode per rendition")
        XCTAssertEqual(run.stats.outputs.map(\.videoFramesSent), [200, 200, 200, 200])

        let expected: [String: (Int, Int)] = ["copy": (640, 360), "a": (320, 180), "b": (320, 180), "c": (480, 270)]
        var sizes: [String: [Int?]] = [:]
        for (stream, size) in expected {
            let probe = try FFProbe.run(try await nginx.awaitRecording(stream: stream))
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 200, stream)
            XCTAssertEqual(probe.audioPackets.count, 346, stream)
            XCTAssertEqual(probe.videoStream?.width, size.0, stream)
            XCTAssertEqual(probe.videoStream?.height, size.1, stream)
            sizes[stream] = probe.videoPackets.map(\.size)
        }
        XCTAssertEqual(sizes["a"], sizes["b"], "outputs 1 and 2 carry the same encode")
    }

    /// A transcoded input (here scaled to 480x270 by the push) with a 320x180 rendition, `--fast`:
    /// the rendition takes every picture the input encoded, after its scale, and decodes none;
    /// both recordings decode whole at their sizes, and each rendition frame shows the picture
    /// of the input's encode at the same place.
    func testATranscodedInputsRenditionTakesTheInputsPicturesAndDecodesNone() async throws {
        let nginx = try startNginx()
        let file = try source()
        var config = PushHelpers.fastConfig()
        config.media.forceTranscode = true
        config.media.outputSize = VideoSize(width: 480, height: 270)
        config.outputVideo = [1: VideoRendition(width: 320, height: 180, bitrateKbps: 300)]
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        try pusher.start(file: file, urls: [nginx.url(stream: "input"), nginx.url(stream: "small")])
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
        XCTAssertNil(run.error, "\(run.eventNames)")

        XCTAssertEqual(run.stats.renditionFramesDecoded, 0, "an encode is never decoded again")
        XCTAssertEqual(run.stats.renditionFramesFromInput, 200)
        XCTAssertEqual(run.stats.renditionPacketsSkipped, 0)
        XCTAssertEqual(run.stats.pipeline.picturesUnmatched, 0, "every picture the input kept found its packet")
        XCTAssertEqual(run.stats.renditions.map(\.framesEncoded), [200])
        XCTAssertEqual(run.stats.outputs.map(\.videoFramesSent), [200, 200])

        var decoded: [String: DecodedVideo] = [:]
        for (stream, size) in [("input", (480, 270)), ("small", (320, 180))] {
            let path = try await nginx.awaitRecording(stream: stream)
            let probe = try FFProbe.run(path)
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 200, stream)
            XCTAssertEqual(probe.videoStream?.width, size.0, stream)
            XCTAssertEqual(probe.videoStream?.height, size.1, stream)
            XCTAssertLessThanOrEqual(probe.largestVideoStep, 0.041, "\(stream): continuous video timestamps")
            // Every frame decodes, compared at one small size.
            decoded[stream] = try DecodedVideo.luma(path, width: 96, height: 54)
            XCTAssertEqual(decoded[stream]?.frames.count, 200, stream)
        }
        let input = try XCTUnwrap(decoded["input"]), small = try XCTUnwrap(decoded["small"])
        XCTAssertLessThan(small.worstMeanDifference(from: input), 12, "each rendition frame is the input's picture at its place (mean luma difference, worst frame)")
    }

    /// The boundary between pictures taken from the input and pictures decoded: a transcoded
    /// input (a filter makes it decode) with a 320x180 rendition, paused onto a pause image (a
    /// still encoded elsewhere, whose packets carry no picture) and resumed, in real time. The
    /// stage decodes only the image's frames, from their keyframe, and takes the input's again
    /// after it: the rendition's recording decodes whole, frame for frame with the main one.
    func testARenditionDecodesNeitherTheInputsPicturesNorThePauseImage() async throws {
        let nginx = try startNginx()
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "renditions-pause")
        self.directory = directory
        let image = directory.appendingPathComponent("paused.png").path
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=0xD0D0D0:s=320x180",
                                                    "-frames:v", "1", "-y", image])
        XCTAssertTrue(made.succeeded, made.summary)
        var config = PushConfig()
        config.statsInterval = .zero
        config.pauseImage = image
        config.pauseImageFrameRate = 5
        config.outputVideo = [1: VideoRendition(width: 320, height: 180, bitrateKbps: 300)]
        let pusher = LivePusher(config: config)
        let counter = FrameCounterFilter()
        try pusher.addFilter(counter)
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), urls: [nginx.url(stream: "main"), nginx.url(stream: "small")])
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30)) { pusher in
            await counter.awaitFrame(40)
            try pusher.pause()
            // The pause's length is the input under test, not a synchronisation.
            try await Task.sleep(for: .seconds(1))
            try pusher.resume()
        }
        XCTAssertNil(run.error, "\(run.eventNames)")

        let main = try DecodedVideo.luma(try await nginx.awaitRecording(stream: "main"), width: 96, height: 54)
        let small = try DecodedVideo.luma(try await nginx.awaitRecording(stream: "small"), width: 96, height: 54)
        let still = main.frames.count - 100
        print("pause image frames: \(still); stats: \(run.stats.renditionFramesFromInput) from the input, "
              + "\(run.stats.renditionFramesDecoded) decoded, \(run.stats.renditionPacketsSkipped) skipped")
        XCTAssertGreaterThan(still, 0, "the pause image went out")
        // The pause image is encoded after the clock, by the push's encode, which keeps its pictures too.
        XCTAssertEqual(run.stats.renditionFramesFromInput, 100 + still, "every frame, as the input or the push's encode made it")
        XCTAssertEqual(run.stats.renditionFramesDecoded, 0, "no encode is decoded")
        XCTAssertEqual(run.stats.renditionPacketsSkipped, 0)
        XCTAssertEqual(run.stats.pipeline.picturesUnmatched, 0, "every picture the input kept found its packet")
        XCTAssertEqual(run.stats.renditions.map(\.framesEncoded), [100 + still])
        XCTAssertEqual(small.frames.count, main.frames.count, "the rendition decodes whole")
        XCTAssertLessThan(small.worstMeanDifference(from: main), 12, "each rendition frame is the main output's picture at its place")
    }

    /// The copy output's path stalls (2 Mbit/s into a peer that stops reading after 1 s): it
    /// sheds its own queue, while both rendition outputs keep every frame and the push keeps
    /// real time. The renditions' encoders run on the producer, never behind an output.
    ///
    /// Keeping real time here means decoding 640x360 and running two encodes at 25 fps, which a
    /// debug build on a busy machine may not manage: the same push without the stall, run first
    /// in this test, measures what the machine gives, and the stall may add nothing to it.
    func testAStalledOutputNeverSlowsTheRenditionOutputs() async throws {
        let nginx = try startNginx()
        let file = try source()
        let baseline = try await pushThroughLoopback(nginx, file, faults: [], streams: ["direct", "small0", "medium0"])
        XCTAssertNil(baseline.error)
        XCTAssertEqual(baseline.stats.outputs.map(\.videoFramesSent), [200, 200, 200], "without the stall every output sends all")

        let run = try await pushThroughLoopback(nginx, file, faults: [try FaultSpec.parse("stall@after=1s")],
                                                streams: ["stalled", "small", "medium"])
        let stalled = run.stats.outputs[0]
        print("without the stall: \(baseline.elapsed), producer \(baseline.stats.lateness.worst / 1000) ms late at worst; "
              + "with it: \(run.elapsed), \(run.stats.lateness.worst / 1000) ms; the stalled output sent \(stalled.videoFramesSent) frames")
        XCTAssertLessThan(stalled.videoFramesSent, 200, "the stalled output could not send everything")
        XCTAssertLessThanOrEqual(run.elapsed, baseline.elapsed + .seconds(2), "the push kept the pace it keeps without the stall")
        XCTAssertLessThanOrEqual(run.stats.lateness.worst, baseline.stats.lateness.worst + 200_000,
                                 "the producer was never held up by the stall (µs late at most)")
        XCTAssertEqual(run.stats.renditions.map(\.framesEncoded), [200, 200])
        for stream in ["small", "medium"] {
            let probe = try FFProbe.run(try await nginx.awaitRecording(stream: stream))
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 200, "\(stream): \(run.eventNames) \(run.stats.outputs)")
            XCTAssertEqual(probe.audioPackets.count, 346, stream)
        }
    }

    /// A real-time push of `file`: output 0 (the source copied) through a loopback with
    /// `faults`, outputs 1 and 2 (320x180 and 480x270 renditions) straight to nginx.
    private func pushThroughLoopback(_ nginx: NginxRTMPServer, _ file: String, faults: [FaultRule],
                                     streams: [String]) async throws -> PushRun {
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)", faults: faults))
        self.loopback?.stop()
        self.loopback = loopback
        let port = try loopback.start()
        var config = PushConfig()
        config.statsInterval = .zero
        config.connectRetryCount = 0
        config.outputVideo = [1: VideoRendition(width: 320, height: 180, bitrateKbps: 300),
                              2: VideoRendition(width: 480, height: 270, bitrateKbps: 500)]
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        try pusher.start(file: file, urls: ["rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/\(streams[0])",
                                            nginx.url(stream: streams[1]), nginx.url(stream: streams[2])])
        return try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
    }

    /// Bad per-output settings are refused before anything connects, with their code.
    func testBadOutputVideoIsRefusedWithItsCode() throws {
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let port = try receiver.start()
        defer { receiver.stop() }
        let url = "rtmp://127.0.0.1:\(port)/live/s"
        for bad in ["1=320x180@300", "0=320x180", "0=1x1@300", "x=320x180@300", "0=320x180@0"] {
            let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), url, "--output-video", bad, "--fast"], timeout: 30)
            XCTAssertNotEqual(result.exitCode, 0, bad)
            XCTAssertTrue(result.stderrString.contains("\(LivePushError.Code.outputSettingsInvalid.rawValue)"), "\(bad): \(result.stderrString)")
        }
        XCTAssertEqual(receiver.summaries().count, 0, "nothing was published")
    }
}

extension FFProbe {
    /// The largest step between consecutive decode times of a track, seconds.
    func largestStep(_ packets: [Packet]) -> Double {
        let times = packets.compactMap(\.dtsTime)
        return zip(times.dropFirst(), times).map { $0 - $1 }.max() ?? 0
    }

    var largestVideoStep: Double { largestStep(videoPackets) }
    var largestAudioStep: Double { largestStep(audioPackets) }
}
