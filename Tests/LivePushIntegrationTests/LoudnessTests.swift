import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `--loudness` against real peers: sources at known loudness pushed to nginx-rtmp, what it
/// recorded measured by ffmpeg's `ebur128` filter (integrated, true peak, short-term), every
/// picture counted; a playout of two clips far apart in loudness; a channel's `/metrics`.
final class LoudnessTests: NginxTestCase {
    private static let frames = 750  // 30 s at 25 fps

    /// Pushes `source` with `--loudness -23` (and `extra`); what nginx recorded, measured.
    private func push(_ source: LoudnessTestMedia.Source, stream: String, fast: Bool) async throws -> (LoudnessTestMedia.Measurement, FFProbe, [String: Any]?) {
        let file = try LoudnessTestMedia.make(source, in: dir)
        let result = try LivePushCLI.run(["push", file, server.url(stream: stream), "--loudness", "-23", "--json", "--stats-interval", "1"]
                                         + (fast ? ["--fast"] : []), timeout: fast ? 120 : 150)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let recording = try await server.awaitRecording(stream: stream)
        // The last statistics line's loudness: what the stage measured on what it sent.
        let stats = result.stdoutString.split(separator: "\n").reversed().lazy.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.compactMap { ($0["stats"] as? [String: Any])?["loudness"] as? [String: Any] }.first
        return (try LoudnessTestMedia.measure(recording), try FFProbe.run(recording), stats)
    }

    private func check(_ measured: LoudnessTestMedia.Measurement, _ probe: FFProbe, tolerance: Double, _ what: String) {
        XCTAssertEqual(measured.integrated, -23, accuracy: tolerance, "\(what): integrated loudness at nginx")
        XCTAssertLessThanOrEqual(measured.truePeak, -1, "\(what): true peak at nginx")
        XCTAssertEqual(probe.videoPackets.count, Self.frames, "\(what): every picture kept")
        // The look-ahead delays the sound's packets, never its timestamps: sound and pictures
        // start and end together (within an AAC frame and a picture).
        let audio = probe.audioPackets.compactMap(\.ptsTime), video = probe.videoPackets.compactMap(\.ptsTime)
        XCTAssertEqual(audio.min() ?? -1, video.min() ?? 1, accuracy: 0.05, "\(what): starts")
        XCTAssertEqual(audio.max() ?? -1, video.max() ?? 1, accuracy: 0.07, "\(what): ends")
    }

    /// About -35 LUFS with clicks, `--fast`: raised 12 LU, the clicks held under -1 dBTP.
    func testAQuietSourceWithClicksIsRaisedAndItsClicksHeld() async throws {
        let (measured, probe, stats) = try await push(.quiet, stream: "quiet", fast: true)
        check(measured, probe, tolerance: 1, "quiet")
        XCTAssertEqual(stats?["integrated"] as? Double ?? 0, -23, accuracy: 1, "the stats say what nginx measured: \(String(describing: stats))")
        XCTAssertEqual(stats?["target"] as? Double, -23)
    }

    /// About -8 LUFS with peaks near 0 dBFS, in real time (the other pace): brought down from
    /// its first frames.
    func testALoudSourceIsBroughtDownInRealTime() async throws {
        let (measured, probe, _) = try await push(.loud, stream: "loud", fast: false)
        check(measured, probe, tolerance: 1, "loud")
        // The loud start is down within 0.3 s: no short-term value (from 3 s on, a window that
        // holds the start) is over the target by more than 1 LU.
        let early = measured.shortTerm(from: 3, to: 4)
        XCTAssertFalse(early.isEmpty)
        XCTAssertLessThanOrEqual(early.max() ?? 0, -22, "\(early)")
    }

    /// 10 s quiet then 20 s loud, `--fast`: ±2 LU, and the step does not break the ceiling.
    func testAStepFromQuietToLoud() async throws {
        let (measured, probe, _) = try await push(.step, stream: "step", fast: true)
        check(measured, probe, tolerance: 2, "step")
        // 27 LU louder at 10 s: from 0.3 s after the step, the momentary loudness (400 ms) is
        // within 4 LU of the target (a plain gain would have it 27 LU over).
        let after = measured.momentary(from: 10.3, to: 12)
        XCTAssertFalse(after.isEmpty)
        XCTAssertLessThanOrEqual(after.max() ?? 0, -23 + 4, "\(after)")
    }

    /// Without `--loudness` the sound is untouched: the AAC that nginx recorded is the file's,
    /// packet for packet.
    func testWithoutTheFlagTheSoundIsCopiedBitForBit() async throws {
        let file = try LoudnessTestMedia.make(.loud, in: dir, seconds: 3)
        let result = try LivePushCLI.run(["push", file, server.url(stream: "plain"), "--fast"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let recording = try await server.awaitRecording(stream: "plain")
        func md5(_ path: String) throws -> String {
            let result = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-map", "0:a", "-c", "copy", "-f", "md5", "-"], timeout: 60)
            XCTAssertTrue(result.succeeded, result.summary)
            return result.stdoutString
        }
        XCTAssertEqual(try md5(recording), try md5(file))
    }

    /// Two clips 27 LU apart in a playout with `--loudness -16`: each clip's short-term loudness
    /// within ±2 LU of -16 from 3 s into it.
    func testAPlayoutOfTwoClipsFarApartInLoudness() async throws {
        _ = try LoudnessTestMedia.make(.loud, in: dir, seconds: 8, name: "A")
        _ = try LoudnessTestMedia.make(.quiet, in: dir, seconds: 8, name: "B")
        let schedule = dir.appendingPathComponent("schedule.json").path
        try """
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 8}, {"id": "b", "source": "B.mp4", "in": 0, "out": 8},
                       {"id": "a2", "source": "A.mp4", "in": 0, "out": 8} ] }
        """.write(toFile: schedule, atomically: true, encoding: .utf8)
        let result = try LivePushCLI.run(["playout", schedule, server.url(stream: "playout"), "--size", "320x240", "--fast",
                                          "--sample-rate", "48000", "--loudness", "-16", "--json"], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let measured = try LoudnessTestMedia.measure(try await server.awaitRecording(stream: "playout"))
        for (name, start) in [("a", 0.0), ("b", 8.0), ("a2", 16.0)] {
            let values = measured.shortTerm(from: start + 3, to: start + 8)
            XCTAssertGreaterThan(values.count, 30, name)
            for value in values { XCTAssertEqual(value, -16, accuracy: 2, "clip \(name): \(values)") }
        }
        XCTAssertLessThanOrEqual(measured.truePeak, -1)
    }

    /// A channel with `"loudness"`: its `/metrics` carry the loudness gauges, read by
    /// prometheus_client's parser, and their values are the target's.
    func testAChannelsMetricsShowItsLoudness() async throws {
        _ = try LoudnessTestMedia.make(.loud, in: dir, seconds: 10, name: "loop")
        let config = dir.appendingPathComponent("channels.json").path
        try """
        {"control": "127.0.0.1:0", "token": "t0ken",
         "channels": [{"id": "l", "input": "loop.mp4", "loop": "forever", "loudness": {"target": -23, "truePeak": -2},
                       "outputs": ["\(server.url(stream: "ch"))"]}]}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["channels", config, "--log-format", "json"])
        defer { cli.interrupt() }
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        // Polled until the short-term value exists (3 s of sound sent), bounded.
        var parsed: ParsedMetrics?
        let deadline = ContinuousClock.now + .seconds(40)
        while ContinuousClock.now < deadline {
            let (data, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
            let text = String(decoding: data, as: UTF8.self)
            if text.contains("livepush_channel_loudness_short_term_lufs") {
                parsed = try PythonTools.prometheus(text)
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let metrics = try XCTUnwrap(parsed, "no loudness gauges in 40 s: \(cli.standardError.suffix(2000))")
        let channel = ["channel": "l"]
        XCTAssertEqual(metrics["livepush_channel_loudness_target_lufs", channel], -23)
        for name in ["momentary", "short_term", "integrated"] {
            XCTAssertEqual(metrics["livepush_channel_loudness_\(name)_lufs", channel] ?? 0, -23, accuracy: 3, name)
        }
        XCTAssertLessThanOrEqual(metrics["livepush_channel_true_peak_dbtp", channel] ?? 0, -2)
        XCTAssertLessThan(metrics["livepush_channel_loudness_gain_db", channel] ?? 0, -10)
        cli.interrupt()
        _ = await cli.awaitExit(timeout: .seconds(20))
    }

    /// Negative values after a space parse; out of range is a usage error with its code; the
    /// channel configuration refuses the same.
    func testOptionsAndConfigurationAreChecked() throws {
        let file = try LoudnessTestMedia.make(.loud, in: dir, seconds: 1)
        for arguments in [["--loudness", "-3"], ["--loudness", "-23", "--true-peak", "1"], ["--loudness=-80"]] {
            let result = try LivePushCLI.run(["push", file, "--fast"] + arguments)
            XCTAssertEqual(result.exitCode, 64, "\(arguments): \(result.summary)")
            XCTAssertTrue(result.stderrString.contains("805505281"), "\(arguments): \(result.stderrString)")
        }
        let peakAlone = try LivePushCLI.run(["push", file, "--fast", "--true-peak", "-2"])
        XCTAssertTrue(peakAlone.stderrString.contains("--true-peak needs --loudness"), peakAlone.stderrString)
        let volume = try LivePushCLI.run(["push", file, "--fast", "--source-volume", "-5"])
        XCTAssertEqual(volume.exitCode, 64)
        XCTAssertTrue(volume.stderrString.contains("--source-volume must be between 0 and 100"), volume.stderrString)
        let good = try LivePushCLI.run(["push", file, "--fast", "--loudness", "-23", "--true-peak", "-2", "--receiver-dir", dir.path])
        XCTAssertEqual(good.exitCode, 0, good.summary)
        let config = dir.appendingPathComponent("channels.json").path
        try #"{"channels": [{"id": "c", "input": "loud.mp4", "loudness": -3, "outputs": ["\#(server.url(stream: "never"))"]}]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try LivePushCLI.run(["channels", config], timeout: 30)
        XCTAssertEqual(refused.exitCode, 1)
        XCTAssertTrue(refused.stderrString.contains("805505281") && refused.stderrString.contains("loudness"), refused.summary)
    }
}
