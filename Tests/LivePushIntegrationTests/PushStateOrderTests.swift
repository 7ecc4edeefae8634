import Foundation
import LivePush
import XCTest

/// The push's state is decided in one place (its engine's `PushControl`) and its events are
/// emitted in the lock that decides them: whatever the app's threads and the outputs' threads
/// do at once, the events the app hears follow the state, and a push ends once.
final class PushStateOrderTests: NginxTestCase {
    /// Every move `PushState` allows (`PushState`'s diagram), as "from>to".
    private static let legalMoves: Set<String> = [
        "idle>connecting", "stopped>connecting", "failed>connecting",
        "connecting>pushing", "pushing>paused", "paused>pushing",
        "pushing>reconnecting", "reconnecting>reconnecting", "paused>paused", "reconnecting>pushing",
        "connecting>stopping", "pushing>stopping", "paused>stopping", "reconnecting>stopping",
        "stopping>stopped", "pushing>stopped", "paused>stopped", "connecting>stopped", "reconnecting>stopped",
        "connecting>failed", "pushing>failed", "paused>failed", "reconnecting>failed",
    ]

    /// Checks that the state changes chain into legal moves from `first`, and that each event
    /// that belongs to a move comes right after that move's `stateChanged`.
    private func assertEventsFollowTheState(_ events: [PushEvent], from first: PushState,
                                            file: StaticString = #filePath, line: UInt = #line) {
        var state = first
        var previous: PushEvent?
        for event in events {
            switch event {
            case .stateChanged(let next):
                XCTAssertTrue(Self.legalMoves.contains("\(state)>\(next)"), "\(state) → \(next)", file: file, line: line)
                state = next
            case .paused:
                XCTAssertEqual(previous, .stateChanged(.paused), "paused after \(String(describing: previous))", file: file, line: line)
            case .resumed:
                XCTAssertEqual(previous, .stateChanged(.pushing), "resumed after \(String(describing: previous))", file: file, line: line)
            case .reconnectSucceeded:
                XCTAssertTrue(previous == .stateChanged(.pushing) || previous == .stateChanged(.paused),
                              "reconnectSucceeded after \(String(describing: previous))", file: file, line: line)
            case .pushStarted:
                XCTAssertEqual(previous, .stateChanged(.pushing), file: file, line: line)
            case .stopped:
                XCTAssertTrue(state == .stopped || state.description == "failed", "stopped while \(state)", file: file, line: line)
            default:
                break
            }
            previous = event
        }
    }

    /// The app pauses and resumes from its own thread as fast as it can while it asks the
    /// outputs to reconnect (which their threads report while the pauses go on): the events
    /// still chain into legal moves of the state, each `paused`, `resumed` and
    /// `reconnectSucceeded` right after its state change; one `stopped` ends them, and the
    /// pusher starts again after it. (A connection lost while paused leaves the state
    /// `paused`, so a resume before it is back makes it `pushing` and no `reconnectSucceeded`
    /// follows: the state machine's rule, as before; the test waits for no success.)
    func testEventsFollowTheStateWhileTheAppAndTheOutputsRace() async throws {
        var config = PushConfig()
        config.statsInterval = .zero
        config.looping = .forever
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let firstFrame = pusher.events()
        let reconnects = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "race"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60)) { pusher in
            _ = try await PushHelpers.awaitEvent(firstFrame) { $0 == .firstFramePushed }
            // The app's thread: pauses, resumes and reconnects with no pause between calls, for
            // 200 rounds and until 20 pauses were accepted: a pause is refused while the push
            // reconnects, which takes longer on a busy machine (the deadline is an upper bound).
            let calls = Task.detached {
                let deadline = ContinuousClock.now + .seconds(30)
                var (round, accepted) = (0, 0)
                while (round < 200 || accepted < 20) && ContinuousClock.now < deadline {
                    if (try? pusher.pause()) != nil { accepted += 1 }
                    if round == 0 || round == 100 { try? pusher.reconnect() }
                    try? pusher.resume()
                    round += 1
                }
            }
            // The outputs' threads answer the reconnects (while the calls go on, or after).
            _ = try await PushHelpers.awaitEvent(reconnects) { $0.name == "reconnectStarted" }
            await calls.value
            try? pusher.stop()
        }
        XCTAssertNil(run.error)
        XCTAssertEqual(pusher.state, .stopped)
        XCTAssertEqual(run.events.first, .stateChanged(.connecting))
        assertEventsFollowTheState(run.events, from: .idle)
        XCTAssertEqual(run.events.filter { $0.name == "stopped" }.count, 1)
        XCTAssertEqual(run.events.last?.name, "stopped")
        XCTAssertGreaterThan(run.events.filter { $0 == .paused }.count, 10, "the pauses raced the reconnects")
        XCTAssertGreaterThan(run.events.filter { $0.name == "reconnectStarted" }.count, 0)

        // A stopped pusher starts again, and the new push's events follow from `stopped`.
        let again = pusher.events()
        let secondFirstFrame = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "race-again"))
        let second = try await PushHelpers.collect(pusher, again, start: .now, timeout: .seconds(60)) { pusher in
            _ = try await PushHelpers.awaitEvent(secondFirstFrame) { $0 == .firstFramePushed }
            try? pusher.stop()
        }
        XCTAssertNil(second.error)
        assertEventsFollowTheState(second.events, from: .stopped)
        XCTAssertEqual(second.events.filter { $0.name == "stopped" }.count, 1)
    }

    /// A source that fails ends the push once, failed with its error: `sdkError`, then the
    /// state `failed` and one `stopped`; the figures the pusher keeps are those `stopped`
    /// carried (the outputs that wind down afterwards end nothing again), and it starts again.
    func testASourceThatFailsEndsThePushOnceAndThePusherStartsAgain() async throws {
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        let broken = LivePushError(.mediaReadFailed, "the test's source broke")
        try pusher.start(source: FailingMediaInput(try MediaInputFactory.open(path: TestMedia.path(.h264AAC)),
                                                  failingAfter: 40, with: broken),
                         url: server.url(stream: "broken"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30))
        XCTAssertEqual(run.error, broken)
        XCTAssertEqual(pusher.state, .failed(broken))
        assertEventsFollowTheState(run.events, from: .idle)
        XCTAssertEqual(Array(run.events.suffix(3)), [.sdkError(broken), .stateChanged(.failed(broken)), .stopped(run.stats)])
        XCTAssertEqual(run.events.filter { $0.name == "stopped" }.count, 1)
        XCTAssertEqual(pusher.stats(), run.stats, "the figures kept are those `stopped` carried")
        XCTAssertThrowsError(try pusher.pause()) { error in
            XCTAssertEqual((error as? LivePushError)?.detail, "cannot pause while failed")
        }

        let again = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "after-failure"))
        let second = try await PushHelpers.collect(pusher, again, start: .now, timeout: .seconds(30))
        XCTAssertNil(second.error)
        XCTAssertEqual(pusher.state, .stopped)
        assertEventsFollowTheState(second.events, from: .failed(broken))
        XCTAssertEqual(pusher.stats().videoFramesSent, second.stats.videoFramesSent)
    }
}

/// A file source that throws `error` instead of its packet number `limit`.
private final class FailingMediaInput: MediaInput {
    private let source: any MediaInput
    private let limit: Int
    private let error: LivePushError
    private var read = 0

    init(_ source: any MediaInput, failingAfter limit: Int, with error: LivePushError) {
        self.source = source
        self.limit = limit
        self.error = error
    }

    var info: StreamInfo { source.info }
    var start: MediaStart? { source.start }
    var readsWithoutWaiting: Bool { source.readsWithoutWaiting }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        read += 1
        if read > limit { throw error }
        return try source.nextPacket()
    }

    func rewind() throws(LivePushError) { try source.rewind() }
    func suspend() throws(LivePushError) -> [MediaPacket] { try source.suspend() }
    func setVideoBitrate(_ bitsPerSecond: Int) { source.setVideoBitrate(bitsPerSecond) }
    func requestKeyframe(atOrAfter time: Int64) { source.requestKeyframe(atOrAfter: time) }
    func interrupt() { source.interrupt() }
}
