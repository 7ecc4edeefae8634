import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LivePush
import XCTest

/// Live overlays on a running playout channel, recorded by nginx and read back: OCR
/// (tesseract) reads the text only between its POST and its DELETE, each change lands on the
/// picture the API answered with, and a schedule entry's logo shows during that entry only.
final class OverlayTests: NginxTestCase {
    /// Where the text goes, and what its box covers (size 40: a 10-pixel box edge around the text).
    private let textAt = (x: 40, y: 40)
    /// The logo: 32×32 opaque white with a transparent 8-pixel border, at (240, 160).
    private let logoAt = (x: 240, y: 160)

    private func request(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        try await ControlHTTP.json(url, method: method, body: body)
    }

    /// The text in frame `index` of `path` (the text's area, scaled up 3×), as tesseract reads it.
    private func ocr(_ path: String, frame index: Int) throws -> String {
        let png = dir.appendingPathComponent("frame-\(index).png").path
        let cut = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-i", path, "-an", "-vf",
            "select=eq(n\\,\(index)),crop=260:80:\(textAt.x - 10):\(textAt.y - 10),scale=iw*3:ih*3,format=gray",
            "-fps_mode", "passthrough", "-frames:v", "1", png,
        ], timeout: 60)
        XCTAssertTrue(cut.succeeded, cut.summary)
        let read = try ProcessRunner.run("tesseract", [png, "stdout", "--psm", "7"], timeout: 60)
        XCTAssertTrue(read.succeeded, read.summary)
        return read.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTextOverlayOverHTTPAndAnEntrysLogoOnARealTimeChannel() async throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/tesseract"), "tesseract-ocr not installed")
        try PlayoutClip.a.make(in: dir, seconds: 4)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        let logo = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "color=white:s=32x32", "-frames:v", "1", "-vf",
            "format=rgba,geq=r=255:g=255:b=255:a='if(between(X,8,23)*between(Y,8,23),255,0)'",
            dir.appendingPathComponent("logo.png").path,
        ], timeout: 60)
        XCTAssertTrue(logo.succeeded, logo.summary)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try """
        { "content": [ {"id": "a1", "source": "A.mp4", "in": 0, "out": 1.6},
                       {"id": "x1", "source": "X.mp4", "in": 0, "out": 1.6,
                        "overlays": [{"id": "logo", "image": "logo.png", "x": \(logoAt.x), "y": \(logoAt.y)}]},
                       {"id": "a2", "source": "A.mp4", "in": 1.6, "out": 3.6} ] }
        """.write(toFile: schedule, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["playout", schedule, server.url(stream: "ovl"), "--size", "320x240", "--json",
                                  "--control", "127.0.0.1:0"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the endpoint never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        _ = await cli.awaitLine { $0.contains("\"entryStarted\"") }

        // Refusals first: each names its field and changes nothing.
        let bad = try await request(base + "/overlays", method: "POST", body: #"{"id": "t 1", "text": "x", "x": 0, "y": 0}"#)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual((bad.json["error"] as? [String: Any])?["code"] as? Int, LivePushError.Code.overlayInvalid.rawValue)
        let outside = try await request(base + "/overlays", method: "POST", body: #"{"id": "e", "image": "/etc/passwd", "x": 0, "y": 0}"#)
        XCTAssertEqual(outside.status, 400)
        let missing = try await request(base + "/overlays/none", method: "DELETE")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual((missing.json["error"] as? [String: Any])?["code"] as? Int, LivePushError.Code.overlayNotFound.rawValue)

        let append = try await request(base + "/append", method: "POST", body: """
            {"id": "z", "source": "A.mp4", "in": 0, "out": 1, "overlays": [{"id": "l", "image": "/etc/hostname", "x": 0, "y": 0}]}
            """)
        XCTAssertEqual((append.json["error"] as? [String: Any])?["name"] as? String, "pathOutsideMediaRoot", "an appended entry's logo stays in the root")

        try await Task.sleep(for: .milliseconds(600))  // the stimulus: into the channel's first entry
        let added = try await request(base + "/overlays", method: "POST", body: """
            {"id": "live", "text": "LIVE 42", "x": \(textAt.x), "y": \(textAt.y), "size": 40, "background": "#000000"}
            """)
        XCTAssertEqual(added.status, 201, "\(added.json)")
        let listed = try await request(base + "/overlays")
        XCTAssertEqual((listed.json["overlays"] as? [[String: Any]])?.first?["text"] as? String, "LIVE 42")
        try await Task.sleep(for: .milliseconds(2000))
        let removed = try await request(base + "/overlays/live", method: "DELETE")
        XCTAssertEqual(removed.status, 200, "\(removed.json)")

        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.output.suffix(5).joined(separator: "\n"))
        let path = try await server.awaitRecording(stream: "ovl")
        let on = try XCTUnwrap((added.json["applied"] as? [String: Any])?["frame"] as? Int, "\(added.json)")
        let off = try XCTUnwrap((removed.json["applied"] as? [String: Any])?["frame"] as? Int, "\(removed.json)")
        // The change lands on the first picture after the command: the one the answer names.
        for answer in [added.json, removed.json] {
            let applied = try XCTUnwrap(answer["applied"] as? [String: Any])
            let time = try XCTUnwrap(applied["mediaTime"] as? Double), after = try XCTUnwrap(applied["after"] as? Double)
            XCTAssertEqual(time - after, 0.04, accuracy: 0.001, "the next picture after the command: \(applied)")
        }

        // Frame by frame: the text's black box is there from `on` to before `off`; recorded
        // frame n is the channel's picture n (25 fps from 0). Decoded to full-range grey: the box
        // is 0, the clips' red 76 and blue 29.
        let video = try DecodedVideo.luma(path, width: 320, height: 240)
        let probe = try FFProbe.run(path)
        let times = probe.videoPackets.compactMap(\.ptsTime).sorted()
        XCTAssertEqual(times.count, video.frames.count)
        XCTAssertEqual(times.first ?? -1, 0, accuracy: 0.001)
        let boxed = video.frames.indices.filter { video.mean($0, x: textAt.x + 2, y: textAt.y + 2, w: 6, h: 6) < 12 }
        let first = try XCTUnwrap(boxed.first, "no frame shows the text's box")
        let last = try XCTUnwrap(boxed.last)
        XCTAssertEqual(boxed.count, last - first + 1, "the box shows in one run of frames")
        XCTAssertEqual(first, on, accuracy: 2, "the POST landed at frame \(on) (\(Double(on) / 25) s)")
        XCTAssertEqual(last + 1, off, accuracy: 2, "the DELETE landed at frame \(off)")
        XCTAssertEqual(times[first], Double(on) / 25, accuracy: 0.081, "the recorded timestamp of the first frame with the text")

        print("overlay: POST landed at frame \(on), the recording's box from \(first); DELETE at frame \(off), the box until \(last)")
        // OCR: the text between the two changes, not before nor after.
        XCTAssertEqual(try ocr(path, frame: (on + off) / 2), "LIVE 42")
        XCTAssertFalse(try ocr(path, frame: max(0, on - 5)).contains("42"))
        XCTAssertFalse(try ocr(path, frame: min(video.frames.count - 1, off + 5)).contains("42"))

        // The logo: white at its place during x1 (frames 40..<80), never elsewhere.
        let white = video.frames.indices.filter { video.mean($0, x: logoAt.x + 10, y: logoAt.y + 10, w: 12, h: 12) > 200 }
        XCTAssertEqual(white.first, 40, "the logo from x1's first picture")
        XCTAssertEqual(white.last, 79, "until its last")
        XCTAssertEqual(white.count, 40, "only during x1: \(white)")
        // Its transparent border leaves the clip's blue.
        XCTAssertEqual(video.mean(60, x: logoAt.x + 1, y: logoAt.y + 1, w: 5, h: 5), video.mean(60, x: 100, y: 200, w: 5, h: 5), accuracy: 4)
    }
}

/// `/channels/ID/overlays` on `livepush channels`, and `push --overlay` at `--fast` pace.
final class OverlayChannelsAndFastTests: NginxTestCase {
    private func request(_ url: String, method: String = "GET", body: String? = nil, token: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    private func frame(_ answer: [String: Any]) -> Int? {
        (answer["applied"] as? [String: Any])?["frame"] as? Int
    }

    func testAChannelsOverlaysThroughTheAPI() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 4)
        try #"{"loop": "forever", "content": [{"id": "a", "source": "A.mp4", "in": 0, "out": 4}]}"#
            .write(toFile: dir.appendingPathComponent("schedule.json").path, atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("channels.json").path
        try """
        {"control": "127.0.0.1:0", "token": "t0k",
         "channels": [{"id": "p", "playout": "schedule.json", "outputs": ["\(server.url(stream: "p"))"]}]}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["channels", config, "--log-format", "json"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        let overlays = base + "/channels/p/overlays"

        let anonymous = try await request(overlays, method: "POST", body: #"{"id": "t", "text": "x", "x": 0, "y": 0}"#)
        XCTAssertEqual(anonymous.status, 401, "the token guards the overlays too")
        let nowhere = try await request(base + "/channels/zz/overlays", token: "t0k")
        XCTAssertEqual(nowhere.status, 404)
        XCTAssertEqual((nowhere.json["error"] as? [String: Any])?["name"] as? String, "channelNotFound")

        // The channel opens in the background: the first change waits until it pushes.
        var added = try await request(overlays, method: "POST", body: ##"{"id": "bug", "text": "ON AIR", "x": 16, "y": 16, "size": 24, "background": "#000000"}"##, token: "t0k")
        let deadline = ContinuousClock.now + .seconds(20)
        while added.status == 400, (added.json["error"] as? [String: Any])?["name"] as? String == "invalidState", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            added = try await request(overlays, method: "POST", body: ##"{"id": "bug", "text": "ON AIR", "x": 16, "y": 16, "size": 24, "background": "#000000"}"##, token: "t0k")
        }
        XCTAssertEqual(added.status, 201, "\(added.json)")
        let on = try XCTUnwrap(frame(added.json), "\(added.json)")
        let again = try await request(overlays, method: "POST", body: #"{"id": "bug", "text": "x", "x": 0, "y": 0}"#, token: "t0k")
        XCTAssertEqual(again.status, 400, "the id is in use")
        let patched = try await request(overlays + "/bug", method: "PATCH", body: #"{"text": "ON AIR 2", "opacity": 0.9}"#, token: "t0k")
        XCTAssertEqual(patched.status, 200, "\(patched.json)")
        XCTAssertEqual((patched.json["overlay"] as? [String: Any])?["text"] as? String, "ON AIR 2")
        XCTAssertGreaterThan(frame(patched.json) ?? 0, on)
        let listed = try await request(overlays, token: "t0k")
        XCTAssertEqual((listed.json["overlays"] as? [[String: Any]])?.map { $0["id"] as? String }, ["bug"])
        let removed = try await request(overlays + "/bug", method: "DELETE", token: "t0k")
        XCTAssertEqual(removed.status, 200, "\(removed.json)")
        let gone = try await request(overlays + "/bug", method: "DELETE", token: "t0k")
        XCTAssertEqual(gone.status, 404)
        XCTAssertEqual((gone.json["error"] as? [String: Any])?["code"] as? Int, LivePushError.Code.overlayNotFound.rawValue)
        cli.interrupt()
        _ = await cli.awaitExit(timeout: .seconds(20))
    }

    /// `--fast`: the overlay given at the start is on every picture, read back by OCR.
    func testPushOverlayFromTheStartAtFastPace() async throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/tesseract"), "tesseract-ocr not installed")
        let source = try PlayoutClip.a.make(in: dir, seconds: 2)
        let overlay = ##"{"id": "bug", "text": "LIVE 42", "x": 40, "y": 40, "size": 40, "background": "#000000"}"##
        let result = try LivePushCLI.run(["push", source, server.url(stream: "fast"), "--fast", "--overlay", overlay], timeout: 60)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let path = try await server.awaitRecording(stream: "fast")
        let video = try DecodedVideo.luma(path, width: 320, height: 240)
        XCTAssertEqual(video.frames.count, 50)
        let boxed = video.frames.indices.filter { video.mean($0, x: 42, y: 42, w: 6, h: 6) < 12 }
        XCTAssertEqual(boxed.count, video.frames.count, "the text's box on every picture")
        for index in [0, video.frames.count - 1] {
            let png = dir.appendingPathComponent("f\(index).png").path
            let cut = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", path, "-an", "-vf",
                                                       "select=eq(n\\,\(index)),crop=260:80:30:30,scale=iw*3:ih*3,format=gray",
                                                       "-fps_mode", "passthrough", "-frames:v", "1", png], timeout: 60)
            XCTAssertTrue(cut.succeeded, cut.summary)
            let read = try ProcessRunner.run("tesseract", [png, "stdout", "--psm", "7"], timeout: 60)
            XCTAssertEqual(read.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines), "LIVE 42", "frame \(index)")
        }
    }
}
