import XCTest
@testable import LivePush

final class ResendHistoryTests: XCTestCase {
    /// 1000-byte video frames at 25 fps with a keyframe every `gop` frames; frame i ends at byte (i + 1) * 1000.
    private func record(_ count: Int, gop: Int = 10, into history: inout ResendHistory, from start: Int = 0,
                        bytesBefore: Int64 = 0) {
        for i in start..<(start + count) {
            let packet = MediaPacket(kind: .video, data: [], dts: Int64(i) * 40_000, pts: Int64(i) * 40_000,
                                     importance: i % gop == 0 ? .key : .reference)
            history.record(packet, end: bytesBefore + Int64(i + 1) * 1000)
        }
    }

    private func firstResent(_ history: inout ResendHistory) -> Int64? {
        history.takeForResend().first.map { $0.dts / 40_000 }
    }

    func testWithoutAcknowledgementKeepsTheFallbackWindow() {
        var history = ResendHistory(limits: .init(fallbackWindow: 25_000), hasVideo: true)
        record(100, into: &history)
        // Frames up to byte 75 000 (frame 74) are assumed received; the keyframe before frame 75 is 70.
        XCTAssertEqual(firstResent(&history), 70)
    }

    func testAcknowledgementConfirmsWhatTheServerRead() {
        var history = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: true)
        record(100, into: &history)
        history.acknowledge(sequenceNumber: 52_000)
        XCTAssertEqual(history.confirmed, 52_000)
        XCTAssertEqual(firstResent(&history), 50)
    }

    func testAFarSmallerAcknowledgementThanTheFallbackKeepsMore() {
        // A server with megabytes in its receive buffer: only what it acknowledged counts.
        var history = ResendHistory(limits: .init(fallbackWindow: 10_000), hasVideo: true)
        record(25, into: &history)
        history.acknowledge(sequenceNumber: 21_500)
        record(75, into: &history, from: 25)
        XCTAssertEqual(firstResent(&history), 20)
    }

    func testSequenceNumbersWrapAndResetsAreNotProgress() {
        var history = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: true)
        let nearWrap = Int64(UInt32.max) - 50_000
        record(40, into: &history, bytesBefore: nearWrap)
        history.acknowledge(sequenceNumber: UInt32(nearWrap + 10_000))
        record(60, into: &history, from: 40, bytesBefore: nearWrap)
        // 40 000 bytes up to the wrap, 20 000 after it.
        history.acknowledge(sequenceNumber: 20_000 - 1)
        XCTAssertEqual(history.acknowledged, nearWrap + 70_000)
        XCTAssertEqual(firstResent(&history), 70)

        var other = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: true)
        record(100, into: &other)
        other.acknowledge(sequenceNumber: 60_000)
        // A counter that starts over (nginx-rtmp at 0xf0000000) would be a step past what was written.
        other.acknowledge(sequenceNumber: 10)
        XCTAssertEqual(other.acknowledged, 60_000)
        other.acknowledge(sequenceNumber: 2010)
        XCTAssertEqual(other.acknowledged, 62_000)
    }

    func testAServerThatStopsAcknowledgingCannotGrowTheHistoryPastItsLimit() {
        var history = ResendHistory(limits: .init(fallbackWindow: 10_000, maxUnconfirmed: 30_000), hasVideo: true)
        history.acknowledge(sequenceNumber: 0)
        record(100, into: &history)
        XCTAssertEqual(history.confirmed, 70_000)
        XCTAssertEqual(firstResent(&history), 70)
    }

    func testANewVideoConfigurationStartsTheHistoryOver() {
        var history = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: true)
        record(30, into: &history)
        history.record(.sequenceHeader(.video, configuration: [1], at: 1_200_000), end: 30_100)
        record(5, into: &history, from: 30)
        XCTAssertEqual(history.entries.count, 6)
        XCTAssertTrue(history.entries.first?.packet.isSequenceHeader ?? false)
    }

    func testTakingForResendStartsTheNextConnectionEmpty() {
        var history = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: true)
        record(20, into: &history)
        history.acknowledge(sequenceNumber: 5000)
        XCTAssertEqual(history.takeForResend().count, 20)
        XCTAssertTrue(history.entries.isEmpty)
        XCTAssertNil(history.acknowledged)
    }

    func testAudioOnlyIsCutPacketByPacket() {
        var history = ResendHistory(limits: .init(fallbackWindow: 1_000_000), hasVideo: false)
        for i in 0..<10 {
            history.record(MediaPacket(kind: .audio, data: [], dts: Int64(i) * 23_000, pts: Int64(i) * 23_000, importance: .key),
                           end: Int64(i + 1) * 100)
        }
        history.acknowledge(sequenceNumber: 450)
        XCTAssertEqual(history.entries.count, 6)
    }

    /// Cut before any acknowledgement came, the history still starts with the connection's
    /// first packet, which is often audio: that must not cost the resend (it once did, and the
    /// push resumed at the next keyframe in the queue, past what the server never got).
    func testAudioBeforeTheFirstKeyframeCanOpenAConnection() {
        let audio = MediaPacket(kind: .audio, data: [], dts: 0, pts: 0, importance: .key)
        let key = MediaPacket(kind: .video, data: [], dts: 0, pts: 0, importance: .key)
        let delta = MediaPacket(kind: .video, data: [], dts: 40_000, pts: 40_000, importance: .reference)
        XCTAssertTrue(ResendHistory.canOpenAConnection(with: [audio, key, delta], hasVideo: true))
        XCTAssertTrue(ResendHistory.canOpenAConnection(with: [key, audio, delta], hasVideo: true))
        XCTAssertFalse(ResendHistory.canOpenAConnection(with: [audio, delta, key], hasVideo: true))
        XCTAssertFalse(ResendHistory.canOpenAConnection(with: [audio], hasVideo: true))
        XCTAssertFalse(ResendHistory.canOpenAConnection(with: [], hasVideo: false))
        XCTAssertTrue(ResendHistory.canOpenAConnection(with: [audio], hasVideo: false))
    }
}
