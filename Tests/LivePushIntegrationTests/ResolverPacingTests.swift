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
        var plainConfig = PushConfig()
        plainConfig.statsInterval = .zero
        plainConfig.looping = .forever
        let plain = LivePusher(config: plainConfig)
        let plainEvents = plain.events()
        try plain.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "plain"))
        defer { try? plain.stop() }  // a failed assertion leaves it running: invalidState once stopped
        _ = try await PushHelpers.awaitEvent(plainEvents) { $0.name == "firstFramePushed" }

        let cued = try CuedTestMedia.make(in: dir, main: .a, seconds: 5, then: .b, for: 3,
                                          cues: [.init(eventID: 3, at: 3, duration: 2), .init(eventID: 3, at: 5, duration: nil, ahead: 1)])
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
}
