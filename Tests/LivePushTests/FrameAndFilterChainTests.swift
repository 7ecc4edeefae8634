@testable import LivePush
import Synchronization
import XCTest

final class VideoFrameTests: XCTestCase {
    func testNewFrameIsBlackWithEvenPlanes() throws {
        let frame = try VideoFrame(width: 64, height: 36)
        XCTAssertEqual(frame.planeCount, 3)
        XCTAssertEqual(frame.planeSize(0).bytesPerRow, 64)
        XCTAssertEqual(frame.planeSize(1).bytesPerRow, 32)
        XCTAssertEqual(frame.planeSize(2).rows, 18)
        XCTAssertGreaterThanOrEqual(frame.stride(ofPlane: 0), 64)
        frame.withPlane(0) { XCTAssertEqual($0[0], 16) }
        frame.withPlane(1) { XCTAssertEqual($0[0], 128) }
        let nv12 = try VideoFrame(width: 64, height: 36, pixelFormat: .nv12)
        XCTAssertEqual(nv12.planeCount, 2)
        XCTAssertEqual(nv12.planeSize(1).bytesPerRow, 64, "interleaved U/V pairs")
    }

    func testOddOrEmptySizeIsAnError() {
        XCTAssertThrowsError(try VideoFrame(width: 63, height: 36))
        XCTAssertThrowsError(try VideoFrame(width: 0, height: 0))
    }

    func testWritingACopyLeavesTheOriginalAlone() throws {
        let original = try VideoFrame(width: 32, height: 32)
        var copy = original
        try copy.withMutablePlane(0) { $0[0] = 200 }
        copy.withPlane(0) { XCTAssertEqual($0[0], 200) }
        original.withPlane(0) { XCTAssertEqual($0[0], 16, "copy on write") }
    }

    func testAudioFrameIsSilentAndCopiesOnWrite() throws {
        let silence = try AudioFrame(sampleRate: 48000, channels: 2, sampleCount: 1024)
        XCTAssertEqual(silence.duration, 21_333)
        var loud = silence
        try loud.withMutableChannel(1) { $0[5] = 0.5 }
        loud.withChannel(1) { XCTAssertEqual($0[5], 0.5) }
        silence.withChannel(1) { XCTAssertEqual($0[5], 0) }
    }
}

final class FilterChainTests: XCTestCase {
    private final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func append(_ line: String) { entries.withLock { $0.append(line) } }
        var all: [String] { entries.withLock { $0 } }
    }

    private final class Marker: VideoFilter {
        let value: UInt8
        let log: Log
        let failOn: Int?
        private let count = Mutex(0)
        init(_ value: UInt8, log: Log, failOn: Int? = nil) {
            self.value = value
            self.log = log
            self.failOn = failOn
        }
        var name: String { "marker\(value)" }
        func create(format: VideoFormat) throws { log.append("create \(name)") }
        func process(_ frame: inout VideoFrame) throws -> Bool {
            let n = count.withLock { n in
                n += 1
                return n
            }
            if n == failOn { throw LivePushError(.transcodeFailed, "marker failed") }
            try frame.withMutablePlane(0) { $0[0] = value }
            return true
        }
        func destroy() { log.append("destroy \(name)") }
    }

    private final class Events: Sendable {
        let list = Mutex<[PushEvent]>([])
        var names: [String] { list.withLock { $0.map(\.name) } }
    }

    func testFiltersRunInOrderAndAreCreatedAndDestroyedOnce() throws {
        let log = Log()
        let events = Events()
        var chain = FilterChain { e in events.list.withLock { $0.append(e) } }
        let a = Marker(1, log: log), b = Marker(2, log: log)
        chain.set([a, b, a])  // a once only
        var frame = try VideoFrame(width: 16, height: 16, timestamp: 40_000)
        chain.run(&frame, frameRate: 25)
        frame.withPlane(0) { XCTAssertEqual($0[0], 2, "b ran after a") }
        XCTAssertEqual(frame.timestamp, 40_000)
        chain.set([b])
        var next = try VideoFrame(width: 16, height: 16)
        chain.run(&next, frameRate: 25)
        chain.shutDown()
        XCTAssertEqual(log.all, ["create marker1", "create marker2", "destroy marker1", "destroy marker2"])
        XCTAssertEqual(events.names, ["filterCreated", "filterCreated", "filterDestroyed", "filterDestroyed"])
    }

    func testAThrowingFilterIsRemovedReportedAndDestroyed() throws {
        let log = Log()
        let events = Events()
        var chain = FilterChain { e in events.list.withLock { $0.append(e) } }
        let failing = Marker(9, log: log, failOn: 2), after = Marker(3, log: log)
        chain.set([failing, after])
        for _ in 0..<3 {
            var frame = try VideoFrame(width: 16, height: 16)
            chain.run(&frame, frameRate: 25)
            frame.withPlane(0) { XCTAssertEqual($0[0], 3, "the filters after it still run") }
        }
        XCTAssertEqual(chain.filters.count, 1)
        // A list the app sent before it heard of the failure does not bring it back.
        chain.set([failing, after])
        var late = try VideoFrame(width: 16, height: 16)
        chain.run(&late, frameRate: 25)
        XCTAssertEqual(chain.filters.count, 1)
        XCTAssertEqual(log.all, ["create marker9", "create marker3", "destroy marker9"])
        let failure = events.list.withLock { $0 }.compactMap { if case .filterFailed(let n, let e) = $0 { (n, e) } else { nil } }
        XCTAssertEqual(failure.first?.0, "marker9")
        XCTAssertEqual(failure.first?.1.code, .filterFailed)
    }

    /// Returns a frame of its own (e.g. a filter that renders into a new picture).
    private final class Replacer: VideoFilter {
        func process(_ frame: inout VideoFrame) throws -> Bool {
            var replacement = try VideoFrame(width: frame.width, height: frame.height, timestamp: 0)
            try replacement.withMutablePlane(0) { $0[0] = 77 }
            frame = replacement
            return true
        }
    }

    /// Scribbles on the frame but says it did not change it.
    private final class Declines: VideoFilter {
        func process(_ frame: inout VideoFrame) throws -> Bool { false }
    }

    func testAReplacementFrameIsUsedWithTheInputsTimestamp() throws {
        var chain = FilterChain { _ in }
        chain.set([Declines(), Replacer()])
        let input = try VideoFrame(width: 16, height: 16, timestamp: 123_000)
        var frame = input
        chain.run(&frame, frameRate: 25)
        frame.withPlane(0) { XCTAssertEqual($0[0], 77) }
        XCTAssertEqual(frame.timestamp, 123_000, "the pipeline keeps the timeline")
        input.withPlane(0) { XCTAssertEqual($0[0], 16, "the input was not written") }
    }

    func testFormatChangeRecreatesFilters() throws {
        let log = Log()
        var chain = FilterChain { _ in }
        chain.set([Marker(1, log: log)])
        var small = try VideoFrame(width: 16, height: 16)
        chain.run(&small, frameRate: 25)
        var large = try VideoFrame(width: 32, height: 16)
        chain.run(&large, frameRate: 25)
        XCTAssertEqual(log.all, ["create marker1", "destroy marker1", "create marker1"])
    }
}
