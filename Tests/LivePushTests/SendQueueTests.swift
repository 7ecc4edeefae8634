import XCTest
@testable import LivePush

final class SendQueueTests: XCTestCase {
    /// A GOP pattern at 25 fps: I P B P B ..., 40 ms apart, 1000 bytes each.
    private func video(_ index: Int, _ importance: MediaPacket.Importance) -> MediaPacket {
        MediaPacket(kind: .video, data: [UInt8](repeating: 0, count: 1000), dts: Int64(index) * 40_000,
                    pts: Int64(index) * 40_000, importance: importance)
    }

    private func audio(_ index: Int) -> MediaPacket {
        MediaPacket(kind: .audio, data: [UInt8](repeating: 0, count: 100), dts: Int64(index) * 40_000,
                    pts: Int64(index) * 40_000, importance: .key)
    }

    private func gop(from start: Int, length: Int) -> [MediaPacket] {
        (0..<length).map { i in
            video(start + i, i == 0 ? .key : (i % 2 == 0 ? .disposable : .reference))
        }
    }

    func testBackpressureModeNeverDrops() {
        var q = SendQueue(limits: .init(maxDuration: 200_000, maxBytes: 1 << 30), mode: .backpressure)
        for p in gop(from: 0, length: 50) { q.push(p) }
        XCTAssertEqual(q.count, 50)
        XCTAssertTrue(q.isFull)
        XCTAssertEqual(q.drops.total, 0)
    }

    func testDropsDisposableFramesFirst() {
        var q = SendQueue(limits: .init(maxDuration: 1_000_000, maxBytes: 10_500), mode: .dropping)
        for p in gop(from: 0, length: 12) { q.push(p) }
        XCTAssertEqual(q.drops.disposable, 2)
        XCTAssertEqual(q.drops.reference + q.drops.keyframes + q.drops.audio, 0)
        XCTAssertFalse(q.items.contains { $0.importance == .disposable && $0.dts < 200_000 })
    }

    func testDropsTailOfOldestCompleteGOPThenWholeGOPButNeverAudioFirst() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 6_000), mode: .dropping)
        var packets = gop(from: 0, length: 6) + gop(from: 6, length: 6)
        packets.insert(audio(0), at: 1)
        for p in packets { q.push(p) }
        // What remains is decodable: every video frame follows its GOP's keyframe.
        var seenKey = false
        for p in q.items where p.kind == .video {
            if p.isKeyframe { seenKey = true }
            XCTAssertTrue(seenKey, "a non-key frame without its keyframe survived")
        }
        XCTAssertTrue(q.items.contains { $0.kind == .audio }, "audio must outlive droppable video")
        XCTAssertEqual(q.drops.audio, 0)
        XCTAssertGreaterThan(q.drops.reference, 0)
        XCTAssertLessThanOrEqual(q.bytes, 6_000)
    }

    func testWhileDisconnectedWholeOldestGOPsGoFirstSoTheRestHasNoHoles() {
        var q = SendQueue(limits: .init(maxDuration: 1_000_000, maxBytes: 1 << 30), mode: .dropping)
        q.isDisconnected = true
        // 4 s of 1 s GOPs with audio beside the video, as a live source queues during an outage.
        for i in 0..<100 {
            q.push(video(i, i % 25 == 0 ? .key : (i % 2 == 0 ? .disposable : .reference)))
            q.push(audio(i))
        }
        XCTAssertEqual(q.items.first?.isKeyframe, true)
        XCTAssertEqual(q.items.first?.kind, .video, "the audio before the kept keyframe went with its GOP")
        let videoDTS = q.items.filter { $0.kind == .video }.map(\.dts)
        XCTAssertEqual(videoDTS, Array(stride(from: videoDTS[0], through: 99 * 40_000, by: 40_000)), "no holes")
        XCTAssertEqual(q.drops.disposable, q.drops.reference, "no thinning: whole GOPs only")
        XCTAssertGreaterThan(q.drops.keyframes, 0)
    }

    func testIncompleteGOPOverLimitSkipsToNextKeyframe() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 3_000), mode: .dropping)
        for p in [video(0, .key), video(1, .reference), video(2, .reference), video(3, .reference)] { q.push(p) }
        q.push(video(4, .reference))
        XCTAssertFalse(q.items.contains { $0.dts == 160_000 }, "frames after a gap cannot be decoded")
        q.push(video(5, .key))
        XCTAssertEqual(q.items.last?.dts, 200_000)
    }

    func testBufferedDurationAndPop() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 1 << 30), mode: .dropping)
        for p in gop(from: 0, length: 5) { q.push(p) }
        XCTAssertEqual(q.bufferedDuration, 160_000)
        XCTAssertEqual(q.pop()?.dts, 0)
        XCTAssertEqual(q.bytes, 4_000)
        q.removeAll()
        XCTAssertTrue(q.isEmpty)
        XCTAssertEqual(q.bytes, 0)
    }
}

final class SendQueueResumeTests: XCTestCase {
    private func packet(_ kind: MediaPacket.Kind, _ index: Int, _ importance: MediaPacket.Importance = .reference) -> MediaPacket {
        MediaPacket(kind: kind, data: [1, 2, 3], dts: Int64(index) * 40_000, pts: Int64(index) * 40_000, importance: importance)
    }

    func testCuesAndSequenceHeadersSurviveWhatDropsTheFramesAroundThem() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 1 << 20), mode: .dropping)
        let cue = MediaPacket.dataMessage([9], at: 0)
        let header = MediaPacket.sequenceHeader(.video, configuration: [1], at: 40_000)
        for p in [packet(.video, 0), cue, header, packet(.audio, 0, .key), packet(.video, 1), packet(.video, 2, .key)] { q.push(p) }
        q.startAtKeyframe()
        XCTAssertEqual(q.items.map(\.kind), [.data, .video, .video], "the cue and the header are kept, in order")
        XCTAssertTrue(q.items[1].isSequenceHeader)
        XCTAssertEqual(q.drops.total, 3, "the frames before the keyframe are counted; the cue and the header are not")
    }

    func testStartAtKeyframeDropsWhatPrecedesTheFirstQueuedKeyframe() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 1 << 20), mode: .dropping)
        for p in [packet(.video, 0), packet(.audio, 0, .key), packet(.video, 1, .key), packet(.video, 2)] { q.push(p) }
        q.startAtKeyframe()
        XCTAssertEqual(q.items.first?.isKeyframe, true)
        XCTAssertEqual(q.count, 2)
        XCTAssertEqual(q.drops.reference, 1)
        XCTAssertEqual(q.drops.audio, 1)
        XCTAssertEqual(q.bytes, 6)
    }

    func testStartAtKeyframeWithoutOneQueuedWaitsForTheNext() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 1 << 20), mode: .dropping)
        q.push(packet(.video, 0))
        q.push(packet(.audio, 0, .key))
        q.startAtKeyframe()
        XCTAssertEqual(q.items.map(\.kind), [.audio])
        q.push(packet(.video, 1))
        XCTAssertEqual(q.count, 1, "non-key video is dropped until a keyframe")
        q.push(packet(.video, 2, .key))
        XCTAssertEqual(q.items.last?.isKeyframe, true)
    }

    func testPushFrontRequeuesOldestFirst() {
        var q = SendQueue(limits: .init(maxDuration: 10_000_000, maxBytes: 1 << 20), mode: .backpressure)
        q.push(packet(.video, 3))
        q.pushFront([packet(.video, 1, .key), packet(.video, 2)])
        XCTAssertEqual(q.items.map(\.dts), [40_000, 80_000, 120_000])
        XCTAssertEqual(q.bytes, 9)
    }
}
