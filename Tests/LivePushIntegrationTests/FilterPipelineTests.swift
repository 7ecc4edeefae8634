import Foundation
@testable import LivePush
import LivePushLoopback
import Synchronization
import XCTest

/// The raw-frame pipeline pushed for real: filters, the detector, the pause image, encoder
/// settings and low-performance warnings, checked in what nginx recorded by decoding it.
final class FilterPipelineTests: NginxTestCase {
    private func realTimeConfig() -> PushConfig {
        var config = PushConfig()
        config.pacing = .realTime
        config.statsInterval = .zero
        return config
    }

    private func decode(_ stream: String) async throws -> (DecodedVideo, FFProbe) {
        let recording = try await server.awaitRecording(stream: stream)
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        let video = try DecodedVideo.luma(recording, width: probe.videoStream?.width ?? 640,
                                          height: probe.videoStream?.height ?? 360)
        return (video, probe)
    }

    func testFilterPatternReachesTheServer() async throws {
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        try pusher.addFilter(CheckerboardFilter())
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "pattern"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
        XCTAssertNil(run.error)
        XCTAssertEqual(run.eventNames.filter { $0.hasPrefix("filter") }, ["filterCreated", "filterDestroyed"])
        XCTAssertEqual(run.stats.pipeline.filteredFrames, 100)

        let (video, probe) = try await decode("pattern")
        XCTAssertEqual(video.frames.count, 100)
        XCTAssertEqual(probe.videoStream?.codecName, "h264")
        let painted = video.frames.indices.filter { CheckerboardFilter.isVisible(in: video, frame: $0) }
        XCTAssertEqual(painted.count, 100, "every frame carries the filter's pattern")

        // The same pusher again: the filter stays, the figures start over.
        let again = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "pattern2"))
        let second = try await PushHelpers.collect(pusher, again, start: .now, timeout: .seconds(60))
        XCTAssertNil(second.error)
        XCTAssertEqual(second.stats.pipeline.filteredFrames, 100, "a push's figures are its own")
    }

    func testAddingAndRemovingAFilterWhilePushing() async throws {
        var config = realTimeConfig()
        config.media.encodeVideo = true
        let pusher = LivePusher(config: config)
        let counter = FrameCounterFilter()
        try pusher.addFilter(counter)
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "addremove"))
        let painter = CheckerboardFilter()
        // The counter's count just before and just after each call: the producer takes the change
        // between two packets, so it shows from a frame between the two (one in flight at most),
        // however fast or slow the machine runs the push.
        let marks = Mutex((added: 0...0, removed: 0...0))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30)) { pusher in
            await counter.awaitFrame(25)
            let beforeAdd = counter.seen
            try pusher.addFilter(painter)
            let added = beforeAdd...counter.seen
            await counter.awaitFrame(60)
            let beforeRemove = counter.seen
            pusher.removeFilter(painter)
            let removed = beforeRemove...counter.seen
            marks.withLock { $0 = (added, removed) }
        }
        XCTAssertNil(run.error)
        XCTAssertEqual(run.events.compactMap { if case .filterCreated(let n) = $0 { n } else { nil } },
                       ["FrameCounterFilter", "CheckerboardFilter"])

        let (video, _) = try await decode("addremove")
        XCTAssertEqual(video.frames.count, 100)
        let painted = video.frames.indices.filter { CheckerboardFilter.isVisible(in: video, frame: $0) }
        let first = try XCTUnwrap(painted.first, "the added filter never showed")
        let last = try XCTUnwrap(painted.last)
        XCTAssertEqual(painted.count, last - first + 1, "one contiguous run of filtered frames: \(painted)")
        let (added, removed) = marks.withLock { $0 }
        print("filter added at count \(added), shown from frame \(first); removed at count \(removed), shown until frame \(last)")
        // Frame n is the (n+1)th counted: the first painted one was counted after addFilter was
        // called, and no later than the one after the frame in flight when it returned.
        XCTAssertTrue((added.lowerBound...added.upperBound + 2).contains(first),
                      "filter added at count \(added) showed from frame \(first)")
        XCTAssertTrue((removed.lowerBound - 1...removed.upperBound + 1).contains(last),
                      "filter removed at count \(removed) showed until frame \(last)")
    }

    func testFilterThatThrowsIsRemovedAndThePushGoesOn() async throws {
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let failing = FailingFilter(failAt: 10)
        try pusher.addFilter(failing)
        try pusher.addFilter(CheckerboardFilter())
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "throwing"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
        XCTAssertNil(run.error, "a failing filter does not end the push")
        let failure = run.events.compactMap { if case .filterFailed(let name, let e) = $0 { (name, e) } else { nil } }
        XCTAssertEqual(failure.count, 1)
        XCTAssertEqual(failure.first?.0, "FailingFilter")
        XCTAssertEqual(failure.first?.1.code, .filterFailed)
        XCTAssertEqual(failure.first?.1.code.rawValue, 0x3003_0201)
        XCTAssertTrue(failure.first?.1.message.contains("boom") ?? false)
        XCTAssertEqual(failing.log.withLock { $0 }, ["create 640x360", "destroy"])
        XCTAssertFalse(pusher.filters.contains { $0 === failing }, "removed from the chain")

        let (video, _) = try await decode("throwing")
        XCTAssertEqual(video.frames.count, 100, "no frame lost to the failure")
        XCTAssertEqual(video.frames.indices.filter { CheckerboardFilter.isVisible(in: video, frame: $0) }.count, 100,
                       "the next filter kept working")
    }

    func testDetectorSeesFramesBeforeTheFilters() async throws {
        let pusher = LivePusher(config: realTimeConfig())
        let detector = RecordingDetector()
        pusher.setDetector(detector)
        try pusher.addFilter(CheckerboardFilter())
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "detector"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30))
        XCTAssertNil(run.error)
        // The detector takes the newest frame only: how many it sees depends on how fast the
        // machine runs it, but each of the 100 is either seen or counted as skipped. Its thread
        // may still be finishing the last one when the push ends.
        let skipped = run.stats.pipeline.detectorFramesSkipped
        let deadline = ContinuousClock.now + .seconds(10)
        while detector.corners.withLock({ $0.count }) + skipped < 100 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let corners = detector.corners.withLock { $0 }
        print("detector saw \(corners.count) frames, skipped \(skipped)")
        XCTAssertEqual(corners.count + skipped, 100, "every frame detected or skipped: \(corners.count) + \(skipped)")
        XCTAssertGreaterThan(corners.count, 0, "the detector ran")
        XCTAssertFalse(corners.contains(235), "the detector saw a filtered picture")
        let (video, _) = try await decode("detector")
        XCTAssertTrue(CheckerboardFilter.isVisible(in: video, frame: 50), "the filter still applied to what was sent")
    }

    func testEncoderSettingsSizeFrameRateAndGOP() async throws {
        var config = PushHelpers.fastConfig()
        config.media.outputSize = VideoSize(width: 320, height: 180)
        config.media.frameRate = 15
        config.media.gopSeconds = 1
        config.media.videoBitrateKbps = 300
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: server.url(stream: "settings"), config: config)
        XCTAssertNil(run.error)
        XCTAssertEqual(run.stats.pipeline.encoderBitrate, 300_000)
        let recording = try await server.awaitRecording(stream: "settings")
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.videoStream?.height, 180)
        let video = probe.videoPackets
        XCTAssertEqual(Double(video.count), 60, accuracy: 2, "4 s at 15 fps")
        let keyframes = video.indices.filter { video[$0].isKeyframe }
        XCTAssertEqual(Array(keyframes.prefix(4)), [0, 15, 30, 45], "a keyframe every second")
        let intervals = zip(video.dropFirst(), video).compactMap { a, b in a.ptsTime.flatMap { t in b.ptsTime.map { t - $0 } } }
        XCTAssertEqual(intervals.max() ?? 0, 1.0 / 15, accuracy: 0.002, "constant frame rate")
    }

    func testPauseImageIsPushedWhilePaused() async throws {
        let image = dir.appendingPathComponent("paused.png").path
        // Solid light grey (Y 195 in yuv420p, 208 once ffmpeg expands it to full-range gray),
        // unlike any frame of the test pattern; 16:9 like the stream, so no letterbox bars.
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=0xD0D0D0:s=320x180",
                                                    "-frames:v", "1", "-y", image])
        XCTAssertTrue(made.succeeded, made.summary)

        var config = realTimeConfig()
        config.pauseImage = image
        config.pauseImageFrameRate = 5
        let pusher = LivePusher(config: config)
        let counter = FrameCounterFilter()
        try pusher.addFilter(counter)
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "paused"))
        // Where the pause began (the counter's count around pause()) and how long it lasted, as
        // the test measured them: a loaded machine sleeps longer than asked.
        let measured = Mutex((paused: 0...0, seconds: 0.0))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30)) { pusher in
            await counter.awaitFrame(40)
            let before = counter.seen
            try pusher.pause()
            let paused = before...counter.seen
            let pausedAt = ContinuousClock.now
            // The pause's length is the input under test, not a synchronisation.
            try await Task.sleep(for: .seconds(2))
            let length = ContinuousClock.now - pausedAt
            try pusher.resume()
            measured.withLock { $0 = (paused, Double(length.components.attoseconds) / 1e18 + Double(length.components.seconds)) }
        }
        XCTAssertNil(run.error)
        let (paused, seconds) = measured.withLock { $0 }

        let (video, probe) = try await decode("paused")
        let still = video.frames.indices.filter { video.deviation($0) < 4 && abs(video.mean($0, x: 0, y: 0, w: 640, h: 360) - 208) < 8 }
        let expected = Int((seconds * 5).rounded())
        print("paused at count \(paused) for \(seconds) s: \(still.count) image frames (\(expected) expected), from frame \(still.first ?? -1)")
        XCTAssertEqual(still.count, expected, accuracy: 1, "\(seconds) s at 5 fps of the pause image, got \(still.count)")
        let first = try XCTUnwrap(still.first), last = try XCTUnwrap(still.last)
        XCTAssertEqual(still.count, last - first + 1, "the image frames are contiguous")
        // Every source frame counted before the switch went out before the image (the encoder
        // is drained), and the switch came at most a frame in flight after pause() returned.
        XCTAssertTrue((paused.lowerBound...paused.upperBound + 2).contains(first), "paused at count \(paused), image from frame \(first)")
        XCTAssertEqual(video.frames.count, 100 + still.count, "no source frame lost")

        let packets = probe.videoPackets
        XCTAssertTrue(packets[first].isKeyframe, "the image starts on a keyframe")
        XCTAssertTrue(packets[last + 1].isKeyframe, "the source resumes on a keyframe")
        let times = packets.compactMap(\.ptsTime)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // One image frame (0.2 s) at most, plus the audio the image's last frame ran over by
        // (the input continues where both tracks ended).
        XCTAssertLessThanOrEqual(gaps.max() ?? 1, 0.25, "timestamps continue through the pause")
        XCTAssertGreaterThan(gaps.min() ?? 0, 0)
        XCTAssertEqual(probe.presentationSpan, 4 + Double(still.count) / 5, accuracy: 0.25)

        // Silent audio under the image, the source's tones around it.
        let samples = try DecodedAudio.samples(try await server.awaitRecording(stream: "paused"))
        let start = times[first] + 0.1, end = times[last] + 0.1
        let pausedAudio = samples[Int(start * 8000)..<Int(end * 8000)]
        let before = samples[Int((times[first] - 1) * 8000)..<Int((times[first] - 0.2) * 8000)]
        XCTAssertLessThan(DecodedAudio.rms(pausedAudio), 0.01, "silence while paused")
        XCTAssertGreaterThan(DecodedAudio.rms(before), 0.05, "the source's tone before the pause")
    }

    func testSlowFilterRaisesLowPerformanceOnce() async throws {
        var config = PushHelpers.fastConfig()
        config.media.outputSize = VideoSize(width: 160, height: 90)
        let pusher = LivePusher(config: config)
        // 70 ms a frame: at most 14 fps of the 25 wanted, under the 70% (17.5 fps) line.
        try pusher.addFilter(SlowFilter(delay: .milliseconds(70)))
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "slow"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
        XCTAssertNil(run.error, "a slow pipeline is a warning, not a failure")
        let warnings = run.events.compactMap { if case .sdkError(let e) = $0, e.code == .lowPerformance { e } else { nil } }
        XCTAssertEqual(warnings.count, 1, "one warning per episode")
        XCTAssertEqual(warnings.first?.code.rawValue, 805_438_211)
        XCTAssertEqual(run.stats.pipeline.lowPerformanceEpisodes, 1)
        XCTAssertLessThan(run.stats.pipeline.encoderCapacityFPS, 17.5)
        let recording = try await server.awaitRecording(stream: "slow")
        XCTAssertEqual(try FFProbe.run(recording).videoPackets.count, 100)
    }

    func testFastPipelineRaisesNoLowPerformanceWarning() async throws {
        var config = PushHelpers.fastConfig()
        config.media.encodeVideo = true
        // Encoding 160x90 keeps the pipeline far above the 17.5 fps line (70% of 25) even in a
        // debug build; how far depends on the machine, so the test measures it.
        config.media.outputSize = VideoSize(width: 160, height: 90)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: server.url(stream: "quick"), config: config)
        XCTAssertNil(run.error)
        let warnings = run.events.filter { $0.error?.code == .lowPerformance }.count
        let pipeline = run.stats.pipeline
        let elapsed = Double(run.elapsed.components.seconds) + Double(run.elapsed.components.attoseconds) / 1e18
        print("pipeline: \(pipeline.encoderCapacityFPS) fps in the last window, \(pipeline.longestSlowWindowRun) slow windows "
              + "in a row at most; the push took \(elapsed) s; \(warnings) warnings")
        XCTAssertEqual(warnings, pipeline.lowPerformanceEpisodes)
        // A window's busy time is part of the push's wall time: when the whole push took less
        // than a window's 25 frames need at 17.5 fps, no window can have been slow, whatever the
        // monitor says, and a warning would be a false alarm.
        if elapsed < 25 / 17.5 {
            XCTAssertEqual(warnings, 0, "a fast pipeline (100 frames in \(elapsed) s) raised the warning")
            XCTAssertGreaterThan(pipeline.encoderCapacityFPS, 17.5)
            XCTAssertEqual(pipeline.longestSlowWindowRun, 0)
        }
        // However loaded the machine, the warning follows what the pipeline measured: three
        // slow windows in a row, or none.
        XCTAssertEqual(warnings > 0, pipeline.longestSlowWindowRun >= 3,
                       "\(warnings) warnings after \(pipeline.longestSlowWindowRun) slow windows in a row")
    }
}
