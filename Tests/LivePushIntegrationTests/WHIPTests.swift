import Foundation
import XCTest

/// Interactive mode: WHIP (RFC 9725) outputs, received by an aiortc endpoint (a WebRTC stack
/// that shares nothing with GStreamer), in a network namespace of the test's own: libnice
/// gathers no candidate on loopback. What the endpoint recorded is decoded.
final class WHIPTests: NginxTestCase {
    private let clip = PlayoutClip(name: "A", color: "red", luma: 81, tone: 300)

    /// A 10 s real-time push with a JWT bearer token that expires 35 s after the start: the
    /// frames arrive and decode, the tone lasts, ICE connects, the DELETE ends the session,
    /// `tokenWillExpire` comes during the push (30 s before `exp`), and the exit is 0.
    func testARealTimePushWithAJWTReachesTheEndpointWhole() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 10)
        let tokenFile = dir.appendingPathComponent("token")
        let endpoint = try await startWHIPEndpoint(in: namespace, token: nil, tokenFile: tokenFile.path)
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        // Made just before the push starts: it expires 35 s after it, so the warning (30 s ahead) falls 5 s in.
        let token = Self.jwt(expiresIn: 35)
        let warningDue = 35.0 - 30 - 0.5  // seconds after the launch below, give or take the clock's second
        try token.write(to: tokenFile, atomically: true, encoding: .utf8)

        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--json"], environment: ["LIVEPUSH_WHIP_TOKEN": token])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(45))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        print("WHIPTests: endpoint \(summary), events \(cli.output.compactMap { Self.eventName($0) })")

        XCTAssertTrue(endpoint.process.output.contains { $0.hasPrefix("ICE ") && ($0.hasSuffix("completed") || $0.hasSuffix("connected")) },
                      "the endpoint saw ICE connect: \(endpoint.process.output)")
        let (_, audio) = try assertArrivedWhole(summary, cli: cli)  // Opus frames, 20 ms
        let recording = try XCTUnwrap(summary["recording"] as? String)
        let tone = try ToneAnalysis(recording: recording)
        let toneSeconds = Double(tone.levels(clip.tone, window: 0.25).filter { $0.level > 0.04 }.count) * 0.25
        XCTAssertGreaterThanOrEqual(toneSeconds, Double(audio) * 0.02 - 0.75, "the 300 Hz tone lasts as long as the sound that arrived")
        let events = cli.output.compactMap { Self.eventName($0) }
        let warned = try XCTUnwrap(events.firstIndex(of: "tokenWillExpire"), "30 s before exp: \(events)")
        XCTAssertLessThan(warned, try XCTUnwrap(events.firstIndex(of: "stopped")), "during the push: \(events)")
        // After the push started, when it started before the warning was due (ICE and DTLS can
        // take longer than 5 s on a busy machine; the warning is then rightly first).
        let started = try XCTUnwrap(cli.output.first { $0.contains("\"pushStarted\"") }
            .flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["t"] as? Double)
        if started < warningDue {
            XCTAssertGreaterThan(warned, try XCTUnwrap(events.firstIndex(of: "pushStarted")), "during the push: \(events)")
        }
        XCTAssertTrue(events.contains("connectionStatusChanged"), "\(events)")
        XCTAssertFalse((cli.output + [cli.standardError]).joined().contains(token), "the token is never printed")
    }

    func testAWrongTokenIsACodedErrorAndNothingIsRecorded() async throws {
        let namespace = try NetworkNamespace()
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "the-right-token")
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", TestMedia.path(.h264AAC), endpoint.url, "--whip-token", "a-wrong-token",
                                             "--retry-count", "0", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertNotEqual(exit, 0)
        let all = cli.output.joined(separator: "\n") + cli.standardError
        XCTAssertTrue(all.contains("tokenInvalid"), all)
        XCTAssertFalse(all.contains("a-wrong-token"), "the token is never printed")
        XCTAssertTrue(endpoint.process.output.contains { $0.hasPrefix("REFUSED") })
        XCTAssertFalse(endpoint.process.output.contains { $0.hasPrefix("POSTED") }, "the endpoint recorded nothing")
    }

    /// One push, two kinds of output: nginx (RTMP) and the WHIP endpoint both get the stream.
    /// The clip loops until the WHIP output has sent 3 s of pictures: it joins when its ICE and
    /// DTLS are up, about half a second in on an idle machine and seconds later on a busy one.
    func testOnePushToNginxAndToWHIP() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 4)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-4s")
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        // The push runs in the namespace (for WebRTC), so nginx runs there too.
        let nginx = try NginxRTMPServer(namespace: namespace.name)
        defer { nginx.stop() }
        let cli = try runInNamespace(namespace, ["push", path, nginx.url(stream: "both"), endpoint.url, "--whip-token", "token-4s", "--json",
                                             "--loop", "forever", "--stats-interval", "0.2"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let enough = await cli.awaitEvent("stats", timeout: .seconds(60)) { event in
            let outputs = (event["stats"] as? [String: Any])?["outputs"] as? [[String: Any]] ?? []
            return outputs.contains { $0["kind"] as? String == "whip" && ($0["videoFramesSent"] as? Int ?? 0) >= 75 }
        }
        XCTAssertNotNil(enough, "the WHIP output never sent 3 s of pictures: \(cli.output.suffix(3))")
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        try assertArrivedWhole(summary, cli: cli)
        let rtmp = try XCTUnwrap(Self.stoppedOutputs(cli).first { $0["kind"] as? String == "rtmp" })
        let recorded = try FFProbe.run(try await nginx.awaitRecording(stream: "both"))
        XCTAssertEqual(recorded.videoPackets.count, rtmp["videoFramesSent"] as? Int, "nginx got every frame sent to it")
        XCTAssertGreaterThanOrEqual(recorded.videoPackets.count, 75)
    }

    /// The push's music reaches a WHIP endpoint: the sound is encoded after the clock with the
    /// music mixed in, and the Opus is made from those mixed frames, not from a decode of the AAC.
    func testTheMusicReachesTheEndpointInOpusMadeFromTheMixedSound() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 4)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.wav")
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-bgm")
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-bgm", "--json",
                                             "--bgm", music, "--bgm-volume", "100"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(45))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        try assertArrivedWhole(summary, cli: cli)
        let tone = try ToneAnalysis(recording: try XCTUnwrap(summary["recording"] as? String))
        XCTAssertGreaterThan(tone.level(1000, from: 1, to: 3), 0.04, "the music")
        XCTAssertGreaterThan(tone.level(clip.tone, from: 1, to: 3), 0.04, "the source under it")
    }

    /// A High-profile MP4 (what most files are) with a 300 Hz tone, pushed in real time to
    /// aiortc's endpoint, which answers only Constrained Baseline H.264, and to nginx in the same
    /// push. The WHIP output needs Constrained Baseline and Opus, and the graph gives it both,
    /// encoded after the clock; nginx gets the copy: High profile, every frame.
    func testAHighProfileFileReachesWHIPAsConstrainedBaselineWhileNginxGetsTheCopy() async throws {
        let namespace = try NetworkNamespace()
        let path = dir.appendingPathComponent("high.mp4").path
        let made = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25:duration=10",
            "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000:duration=10", "-ac", "2", "-pix_fmt", "yuv420p",
            "-c:v", "libx264", "-profile:v", "high", "-preset", "veryfast", "-g", "50", "-c:a", "aac", "-shortest", path,
        ], timeout: 120)
        XCTAssertTrue(made.succeeded, made.summary)
        let source = try FFProbe.run(path)
        XCTAssertEqual(source.streams.first(where: \.isVideo)?.profile, "High")
        let sourcePictures = source.videoPackets.count
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-high")
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let nginx = try NginxRTMPServer(namespace: namespace.name)
        defer { nginx.stop() }
        let cli = try runInNamespace(namespace, ["push", path, nginx.url(stream: "copy"), endpoint.url, "--whip-token", "token-high", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        let stats = try XCTUnwrap(cli.stoppedStats, "\(cli.output.suffix(3))")
        print("WHIPTests(high): endpoint \(summary), renditions \(stats["renditions"] ?? "none"), opus \(stats["opusFramesEncoded"] ?? 0), outputs \(Self.stoppedOutputs(cli))")

        // At the endpoint: 90 % of the pictures decoded, and the tone.
        let pictures = summary["video"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(Double(pictures), 0.9 * Double(sourcePictures), "pictures decoded at the endpoint: \(summary)")
        let renditions = stats["renditions"] as? [[String: Any]] ?? []
        XCTAssertEqual(renditions.map { $0["video"] as? String }, ["640x360@800 constrained baseline"])
        XCTAssertEqual(renditions.first?["outputs"] as? [Int], [1], "the WHIP output's own encode")
        XCTAssertGreaterThanOrEqual(stats["opusFramesEncoded"] as? Int ?? 0, 480, "9.6 s of Opus (20 ms frames), made once")
        let tone = try ToneAnalysis(recording: try XCTUnwrap(summary["recording"] as? String))
        let sounding = tone.levels(300, window: 0.25).filter { $0.level > 0.04 }
        XCTAssertGreaterThanOrEqual(Double(sounding.count) * 0.25, 0.9 * 10, "the 300 Hz tone for 90 % of the 10 s")
        // The strongest frequency from 200 to 400 Hz, 1 Hz apart, over the sounding span.
        let span = Int((sounding.first?.time ?? 0) * Double(ToneAnalysis.rate))..<Int(((sounding.last?.time ?? 0) + 0.25) * Double(ToneAnalysis.rate))
        let strongest = (200...400).max { tone.level(Double($0), in: span) < tone.level(Double($1), in: span) }
        XCTAssertEqual(strongest, 300, "the tone's frequency at the endpoint")

        // At nginx: the copy.
        let recorded = try FFProbe.run(try await nginx.awaitRecording(stream: "copy"))
        XCTAssertEqual(recorded.streams.first(where: \.isVideo)?.profile, "High", "nginx got the file's own H.264")
        XCTAssertEqual(recorded.videoPackets.count, sourcePictures, "and every picture of it")
        XCTAssertEqual(recorded.streams.first(where: \.isAudio)?.codecName, "aac")
    }

    /// Packet loss on the path (a relay of the endpoint's that drops 35 % of the datagrams both
    /// ways from 3 to 8 s after the offer) makes the rated quality fall to poor or worse, and
    /// rise again once the loss stops. The clip loops until the quality has recovered (bounded):
    /// how long the retransmissions take to settle depends on the machine. The machines have no
    /// netem, hence the relay.
    func testLossOnThePathMakesTheQualityFallThenRecover() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 10)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-loss", extra: ["--relay", "--loss", "3:8:35"])
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-loss", "--json", "--loop", "forever"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        func qualities() -> [String] {
            cli.output.compactMap { line -> String? in
                guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      event["event"] as? String == "networkQualityChanged" else { return nil }
                return event["quality"] as? String
            }
        }
        func recovered(_ qualities: [String]) -> Bool {
            guard let worse = qualities.firstIndex(where: { ["poor", "bad", "down"].contains($0) }) else { return false }
            return qualities[worse...].contains { ["excellent", "good"].contains($0) }
        }
        let deadline = ContinuousClock.now + .seconds(90)
        while !recovered(qualities()), cli.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        print("WHIPTests(loss): qualities \(qualities()), endpoint \(summary)")
        XCTAssertGreaterThan(summary["dropped"] as? Int ?? 0, 0, "the relay dropped datagrams")
        XCTAssertNotNil(qualities().firstIndex { ["poor", "bad", "down"].contains($0) }, "the quality fell: \(qualities())")
        XCTAssertTrue(recovered(qualities()), "and recovered: \(qualities())")
    }

    // MARK: - Helpers

    /// A JWT (unsigned: the endpoint compares it whole) whose `exp` is `seconds` from now.
    static func jwt(expiresIn seconds: Int) -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let exp = Int(Date().timeIntervalSince1970) + seconds
        return part(#"{"alg":"HS256","typ":"JWT"}"#) + "." + part(#"{"sub":"livepush-test","exp":\#(exp)}"#) + ".c2lnbmF0dXJl"
    }

    /// What a WHIP endpoint got, against what the push's WHIP output says it sent.
    ///
    /// WebRTC's start: the output publishes once its own ICE and DTLS are up and sends what it
    /// holds at once; the endpoint finishes DTLS a moment later (later on a busy machine: it is
    /// Python), and what comes before it has its SRTP keys is lost, up to the next keyframe (a
    /// keyframe cannot be made on request from coded input). How long that is depends on the
    /// machine, so this does not count on a share of the clip: from the first picture the
    /// endpoint could decode, everything sent must have arrived, pictures and sound.
    /// Returns the endpoint's (video, audio) frame counts.
    @discardableResult
    private func assertArrivedWhole(_ summary: [String: Any], cli: RunningCLI,
                                    file: StaticString = #filePath, line: UInt = #line) throws -> (Int, Int) {
        let whip = try XCTUnwrap(Self.stoppedOutputs(cli).first { $0["kind"] as? String == "whip" },
                                 "the stopped event lists the WHIP output: \(cli.output.suffix(3))", file: file, line: line)
        let sentVideo = whip["videoFramesSent"] as? Int ?? 0, sentAudio = whip["audioFramesSent"] as? Int ?? 0
        let video = summary["video"] as? Int ?? 0, audio = summary["audio"] as? Int ?? 0
        print("WHIPTests: the WHIP output \(whip); endpoint \(summary)")
        let gop = 25  // the clip's -g
        XCTAssertGreaterThanOrEqual(video, gop, "at least a whole GOP of pictures decoded: \(summary)", file: file, line: line)
        XCTAssertLessThanOrEqual(video, sentVideo, "no more than was sent: \(summary)", file: file, line: line)
        // Sound in seconds: the output and the endpoint both count Opus frames (20 ms).
        let sentSound = Double(sentAudio) * 0.02, gotSound = Double(audio) * 0.02
        XCTAssertGreaterThanOrEqual(gotSound, Double(video) / 25 - 0.4, "the sound beside the pictures: \(summary)",
                                    file: file, line: line)
        XCTAssertLessThanOrEqual(gotSound, sentSound + 0.1, "no more than was sent: \(summary)", file: file, line: line)
        let received = try FFProbe.run(try XCTUnwrap(summary["recording"] as? String, file: file, line: line))
        func largestStep(_ times: [Double]) -> Double { zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0 }
        let pictures = received.videoPackets.compactMap(\.ptsTime).sorted()
        XCTAssertEqual(pictures.count, video, "the endpoint recorded what it counted", file: file, line: line)
        XCTAssertLessThanOrEqual(largestStep(pictures), 0.081, "no picture missing once they began", file: file, line: line)
        XCTAssertLessThanOrEqual(largestStep(received.audioPackets.compactMap(\.ptsTime).sorted()), 0.1, "nor any sound",
                                 file: file, line: line)
        return (video, audio)
    }

    /// The per-output figures of a `--json` push's `stopped` event.
    static func stoppedOutputs(_ cli: RunningCLI) -> [[String: Any]] {
        cli.stoppedStats?["outputs"] as? [[String: Any]] ?? []
    }

    static func eventName(_ line: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["event"] as? String
    }
}

extension RunningCLI {
    /// The endpoint's `SUMMARY {...}` line (printed when the DELETE stopped its recorder).
    /// (The endpoint prints it once its recorder has drained: up to 20 s on a busy machine.)
    func awaitSummary(timeout: Duration = .seconds(45)) async throws -> [String: Any] {
        let found = await awaitLine(timeout: timeout) { $0.hasPrefix("SUMMARY ") }
        let line = try XCTUnwrap(found, "no DELETE reached the endpoint: \(output)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst(8).utf8)) as? [String: Any])
    }
}
