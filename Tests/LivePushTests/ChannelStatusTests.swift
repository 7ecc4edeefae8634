import XCTest
@testable import LivePush

/// A channel keeps only its own phase; while its push runs, its status is the push's state,
/// read when asked (no copy folded from events).
final class ChannelStatusTests: XCTestCase {
    func testARunningChannelShowsItsPushsState() {
        XCTAssertEqual(Channel.status(.running, push: .connecting, retryPending: false), .starting)
        XCTAssertEqual(Channel.status(.running, push: .connecting, retryPending: true), .reconnecting,
                       "waiting to try its first connect again is not failing")
        XCTAssertEqual(Channel.status(.running, push: .pushing, retryPending: false), .pushing)
        XCTAssertEqual(Channel.status(.running, push: .paused, retryPending: false), .pushing)
        XCTAssertEqual(Channel.status(.running, push: .reconnecting, retryPending: false), .reconnecting)
        XCTAssertEqual(Channel.status(.running, push: .stopped, retryPending: false), .finished, "its media ended")
        XCTAssertEqual(Channel.status(.running, push: .failed(LivePushError(.connectionLost)), retryPending: false), .reconnecting,
                       "a failed push is restarted")
    }

    func testTheChannelsOwnPhasesWinOverItsPush() {
        XCTAssertEqual(Channel.status(.stopped, push: nil, retryPending: false), .stopped)
        XCTAssertEqual(Channel.status(.opening, push: nil, retryPending: true), .starting)
        XCTAssertEqual(Channel.status(.failed, push: nil, retryPending: false), .failed)
        XCTAssertEqual(Channel.status(.restartPending, push: .failed(LivePushError(.mediaReadFailed)), retryPending: true), .reconnecting)
    }
}
