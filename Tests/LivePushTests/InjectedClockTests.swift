import Synchronization
import XCTest
@testable import LivePush

/// Pieces of a push's flow driven by a ``ManualMonotonicClock`` handed in through
/// ``PushConfig/monotonicClock`` (or their init): what they decide over time is checked by
/// moving the clock, never by sleeping.
final class InjectedClockTests: XCTestCase {
    private static let info = StreamInfo(video: VideoTrackInfo(width: 2, height: 2, frameRate: 25, bitrate: 0, decoderConfiguration: []),
                                         audio: nil, duration: 0)

    private static func frame(_ index: Int) -> MediaPacket {
        MediaPacket(kind: .video, data: [UInt8](repeating: 0, count: 1000), dts: Int64(index) * 40_000,
                    pts: Int64(index) * 40_000, importance: index % 25 == 0 ? .key : .reference)
    }

    /// A real-time output whose queue holds more than `networkPoorBacklog` of media says
    /// `networkPoor` once that has lasted half a second on the push's clock, not before, and
    /// `networkRecovered` half a second after the backlog fell back under its bound.
    func testAnOutputReportsAPoorNetworkAfterHalfASecondOnThePushsClock() throws {
        let clock = ManualMonotonicClock()
        var config = PushConfig()
        config.monotonicClock = clock
        let changes = Mutex<[CongestionDetector.Change]>([])
        let output = PushOutput(id: 0, config: config, url: try PushURL("rtmp://127.0.0.1/live/s"), info: Self.info) { signal in
            if case .network(let change) = signal { changes.withLock { $0.append(change) } }
        }
        // 1.2 s of media waits (nothing sends it: the output was never started).
        for index in 0..<30 { output.push(Self.frame(index)) }
        XCTAssertEqual(changes.withLock { $0 }, [], "the backlog has only just reached its bound")
        clock.advance(by: .milliseconds(499))
        output.push(Self.frame(30))
        XCTAssertEqual(changes.withLock { $0 }, [], "held for less than half a second")
        clock.advance(by: .milliseconds(1))
        output.push(Self.frame(31))
        XCTAssertEqual(changes.withLock { $0 }, [.poor])

        // The queue is emptied (as a sender would), and the next figures are measured against the clock.
        output.state.withLock { $0.queue.removeAll() }
        output.push(Self.frame(32))
        clock.advance(by: .milliseconds(500))
        output.push(Self.frame(33))
        XCTAssertEqual(changes.withLock { $0 }, [.poor, .recovered])
    }

    /// `onArrival` stamps what an app sends with the time of the send on the clock the queue
    /// was given, counted from the first item of either track.
    func testArrivalTimestampsComeFromTheInjectedClock() throws {
        struct Item: AppFed { var timestamp: Int64 }
        let clock = ManualMonotonicClock()
        let feed = AppFeedQueue<Item, Item>(hasVideo: true, hasAudio: true, timestamps: .onArrival, maxVideo: 4,
                                            maxAudioCost: 4, audioCost: { _ in 1 }, clock: clock)
        try feed.send(video: Item(timestamp: 999))
        clock.advance(by: .milliseconds(40))
        try feed.send(audio: Item(timestamp: 999))
        clock.advance(by: .milliseconds(20))
        try feed.send(video: Item(timestamp: 999))
        feed.finish()
        var taken: [String] = []
        loop: while true {
            switch feed.take() {
            case .video(let item): taken.append("v\(item.timestamp)")
            case .audio(let item): taken.append("a\(item.timestamp)")
            case .end: break loop
            }
        }
        XCTAssertEqual(taken, ["v0", "a40000", "v60000"])
    }

    /// The named conversions that replace written-out `1_000_000`s: truncating for a
    /// `Duration` and for samples (as the code they replace), rounding for seconds.
    func testMediaTimeConversions() {
        XCTAssertEqual(MediaTime(.milliseconds(1500)).microseconds, 1_500_000)
        XCTAssertEqual(MediaTime(.nanoseconds(1999)).microseconds, 1)
        XCTAssertEqual(MediaTime(seconds: 1 / 29.97).microseconds, 33_367)
        XCTAssertEqual(MediaTime(samples: 1024, rate: 44_100).microseconds, 23_219)
        XCTAssertEqual(MediaTime(samples: 1024, rate: 48_000).microseconds, 21_333)
    }
}
