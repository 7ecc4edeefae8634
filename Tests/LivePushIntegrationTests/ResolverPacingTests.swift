import Foundation
import LivePush
import Synchronization
import XCTest

/// Real-time pushes from files share a few pacing threads (one per core, two at least). A push
/// whose content resolver is slow must not hold one of them: the scan of its file's cues and
/// the wait for the answers happen elsewhere, and the push starts once they are in.
final class ResolverPacingTests: NginxTestCase {
    /// Answers every opportunity with `ad`, after `delay` (an ad server that takes its time).
    final class SlowResolver: ContentResolver, Sendable {
        let ad: PlayoutSchedule.Clip
        let delay: Duration

        init(ad: PlayoutSchedule.Clip, delay: Duration) {
            self.ad = ad
            self.delay = delay
        }

        func shouldHandle(_ opportunity: PlacementOpportunity) -> Bool { opportunity.kind == .adBreak }

        func process(_ opportunity: PlacementOpportunity) async throws -> [AdBreak] {
            try await Task.sleep(for: delay)
            return [AdBreak(ads: [ad])]
        }

        func cancel(_ opportunity: PlacementOpportunity) {}
    }

    final class Flag: Sendable {
        let value = Mutex(false)
    }

    /// A plain real-time push runs; then as many cued pushes as there are pacing threads start,
    /// each with a resolver that answers after 2.5 s. Before the fix, each of them waited for
    /// its answer on a pacing thread, all at once, and the plain push went out 2.5 s late.
    func testASlowContentResolverHoldsUpNoOtherPushOnThePacingThreads() async throws {
        let answerDelay = Duration.milliseconds(2_500)
        let plain = try await startPlainPush()
        defer { try? plain.stop() }  // a failed assertion leaves it running: invalidState once stopped
        let cued = try makeCuedMedia()
        let ad = PlayoutSchedule.Clip(id: "ad", source: try PlayoutClip.y.make(in: dir, seconds: 3), in: 0, out: 1)
        var cuedConfig = PushConfig()
        cuedConfig.statsInterval = .zero
        cuedConfig.breaks.resolverTimeout = .seconds(5)
        // The scheduler's threads: one per core, two at least (PacingScheduler.shared).
        let pacingThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        var firstFrames: [Task<Void, any Error>] = []
        var cuedPushers: [LivePusher] = []
        let started = ContinuousClock.now
        for index in 0..<pacingThreads {
            let pusher = LivePusher(config: cuedConfig)
            pusher.resolvers.register(SlowResolver(ad: ad, delay: answerDelay))
            let events = pusher.events()
            try pusher.start(file: cued, url: server.url(stream: "cued\(index)"))
            cuedPushers.append(pusher)
            let resolved = Flag()
            firstFrames.append(Task {
                _ = try await PushHelpers.awaitEvent(events, timeout: .seconds(30)) { event in
                    if case .breaks(.opportunityResolved(_, ads: 1)) = event { resolved.value.withLock { $0 = true } }
                    return event.name == "firstFramePushed"
                }
                // A file's opportunities are resolved up front, before its first picture goes out.
                XCTAssertTrue(resolved.value.withLock { $0 }, "resolved before the first frame")
            })
        }
        defer { for pusher in cuedPushers { try? pusher.stop() } }  // invalidState once they ended: the aim
        for task in firstFrames { try await task.value }
        let answered = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(answered, answerDelay, "the resolvers took their time")
        // The pacing threads are free again: what the plain push owed during the wait goes out
        // (and is counted) with its next second of pictures.
        let sent = plain.stats().videoFramesSent
        try await waitUntil("the plain push goes on") { plain.stats().videoFramesSent >= sent + 25 }

        let lateness = plain.stats().lateness
        print("plain push beside \(pacingThreads) slow resolvers: worst lateness \(lateness.worst / 1000) ms, "
              + "\(lateness.packetsLaterThan100ms) packets over 100 ms; answers after \(answered)")
        XCTAssertLessThan(lateness.worst, 1_000_000, "the plain push waited for another push's resolver")
        XCTAssertEqual(plain.state, .pushing)
    }

    /// Feeds `file` into the named pipe at `fifo` once it is opened for reading, `after` later:
    /// an ad on a slow disk or network share, whose open takes that long.
    private func feedSlowly(_ file: String, into fifo: String, after delay: Duration) throws -> Thread {
        XCTAssertEqual(mkfifo(fifo, 0o600), 0, "mkfifo \(fifo)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let writer = Thread {
            let descriptor = open(fifo, O_WRONLY)  // until the fill's opening opens it to read
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            // The whole file fits in the pipe: the reader never waits for this thread once it wrote.
            _ = fcntl(descriptor, 1031 /* F_SETPIPE_SZ */, 1 << 20)
            Thread.sleep(forTimeInterval: Double(delay.components.seconds))  // the slow opening itself, not a measurement
            bytes.withUnsafeBytes { raw in
                var written = 0
                while written < raw.count {
                    let count = write(descriptor, raw.baseAddress! + written, raw.count - written)
                    if count <= 0 { return }
                    written += count
                }
            }
        }
        writer.start()
        return writer
    }

    /// The plain real-time push beside the cued ones (looped, so it runs through the test),
    /// once its first frame went out.
    private func startPlainPush() async throws -> LivePusher {
        var config = PushConfig()
        config.statsInterval = .zero
        config.looping = .forever
        let plain = LivePusher(config: config)
        let events = plain.events()
        try plain.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "plain"))
        _ = try await PushHelpers.awaitEvent(events) { $0.name == "firstFramePushed" }
        return plain
    }

    /// 5 s of A with a break cued at 3 s for 2 s, then 3 s of B.
    private func makeCuedMedia() throws -> String {
        try CuedTestMedia.make(in: dir, main: .a, seconds: 5, then: .b, for: 3,
                               cues: [.init(eventID: 3, at: 3, duration: 2), .init(eventID: 3, at: 5, duration: nil, ahead: 1)])
    }

    /// As many cued pushes as there are pacing threads play an ad that takes 2 s to open (a
    /// file on a pipe that answers late). Opened on the pacing thread, as it was, each held its
    /// thread for those 2 s, all at once, and the plain push beside them waited as long. The
    /// fills open on the opening pool now: each cued push waits for its own fill, and the
    /// plain push goes on.
    func testASlowFillOpeningHoldsUpNoOtherPushOnThePacingThreads() async throws {
        let openDelay = Duration.seconds(2)
        let plain = try await startPlainPush()
        defer { try? plain.stop() }  // a failed assertion leaves it running: invalidState once stopped
        let cued = try makeCuedMedia()
        let adFile = try PlayoutClip.y.make(in: dir, seconds: 3, ext: "ts")
        let pacingThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        var writers: [Thread] = []
        var runs: [Task<(PushRun, Int64), any Error>] = []
        for index in 0..<pacingThreads {
            let fifo = dir.appendingPathComponent("ad\(index).ts").path
            writers.append(try feedSlowly(adFile, into: fifo, after: openDelay))
            var config = PushConfig()
            config.statsInterval = .zero
            let pusher = LivePusher(config: config)
            pusher.resolvers.register(SlowResolver(ad: PlayoutSchedule.Clip(id: "ad", source: fifo, in: 0, out: 1), delay: .zero))
            let events = pusher.events()
            try pusher.start(file: cued, url: server.url(stream: "slowfill\(index)"))
            runs.append(Task {
                let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60))
                return (run, pusher.stats().lateness.worst)
            })
        }
        for (index, task) in runs.enumerated() {
            let (run, ownLateness) = try await task.value
            XCTAssertNil(run.error)
            XCTAssertTrue(run.events.contains { if case .breaks(.breakStarted) = $0 { true } else { false } }, "\(run.eventNames)")
            // Its own packets after the break waited for its fill: that push, and only it, is late.
            XCTAssertGreaterThan(ownLateness, 1_500_000, "push \(index) waited for its fill's opening")
            let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "slowfill\(index)"), frameRate: 25)
            XCTAssertEqual(recording.segments.first?.name, "A", "\(recording.segments)")
            let ad = recording.segments.first { $0.name == "Y" }
            XCTAssertEqual(Double(ad?.frames ?? 0), 25, accuracy: 2, "the ad's second, whole: \(recording.segments)")
        }
        let sent = plain.stats().videoFramesSent
        try await waitUntil("the plain push goes on") { plain.stats().videoFramesSent >= sent + 25 }
        let lateness = plain.stats().lateness
        print("plain push beside \(pacingThreads) fills opening for \(openDelay): worst lateness \(lateness.worst / 1000) ms, "
              + "\(lateness.packetsLaterThan100ms) packets over 100 ms")
        XCTAssertLessThan(lateness.worst, 1_000_000, "the plain push waited for another push's fill")
        XCTAssertEqual(plain.state, .pushing)
        _ = writers  // each ends once its file is written (the fills read them whole)
    }
}
