import LivePushWire
import XCTest

@testable import LivePushLoopback

/// Chunk stream encoding/decoding without sockets.
final class ReceiverChunkTests: XCTestCase {
    private func decodeAll(_ bytes: [UInt8], decoder: inout RTMPChunkDecoder) throws -> [RTMPMessage] {
        decoder.append(bytes)
        var out: [RTMPMessage] = []
        while let m = try decoder.nextMessage() { out.append(m) }
        return out
    }

    func testFmt0KnownBytes() throws {
        var encoder = RTMPChunkEncoder()
        let m = RTMPMessage(type: .commandAMF0, streamID: 1, timestamp: 0x010203, chunkStreamID: 3, payload: [0xAA, 0xBB])
        let bytes = encoder.encode(m)
        XCTAssertEqual(bytes, [0x03, 0x01, 0x02, 0x03, 0x00, 0x00, 0x02, 0x14, 0x01, 0x00, 0x00, 0x00, 0xAA, 0xBB])
        var decoder = RTMPChunkDecoder()
        XCTAssertEqual(try decodeAll(bytes, decoder: &decoder), [m])
    }

    func testHeaderCompressionFmt0To3() throws {
        var encoder = RTMPChunkEncoder()
        let messages = [
            RTMPMessage(type: .video, streamID: 1, timestamp: 0, chunkStreamID: 6, payload: [1, 2, 3]),      // fmt 0
            RTMPMessage(type: .video, streamID: 1, timestamp: 40, chunkStreamID: 6, payload: [1, 2, 3, 4]),  // fmt 1 (length)
            RTMPMessage(type: .video, streamID: 1, timestamp: 80, chunkStreamID: 6, payload: [5, 6, 7, 8]),  // fmt 3 (same delta 40)
            RTMPMessage(type: .video, streamID: 1, timestamp: 100, chunkStreamID: 6, payload: [9, 9, 9, 9]), // fmt 2 (delta 20)
            RTMPMessage(type: .video, streamID: 1, timestamp: 120, chunkStreamID: 6, payload: [8, 8, 8, 8]), // fmt 3
            RTMPMessage(type: .audio, streamID: 1, timestamp: 120, chunkStreamID: 6, payload: [8, 8, 8, 8]), // fmt 1 (type)
            RTMPMessage(type: .audio, streamID: 2, timestamp: 130, chunkStreamID: 6, payload: [8, 8, 8, 8]), // fmt 0 (stream id)
            RTMPMessage(type: .audio, streamID: 2, timestamp: 5, chunkStreamID: 6, payload: [8, 8, 8, 8]),   // fmt 0 (backwards)
        ]
        var fmts: [UInt8] = []
        var all: [UInt8] = []
        for m in messages {
            let bytes = encoder.encode(m)
            fmts.append(bytes[0] >> 6)
            all += bytes
        }
        XCTAssertEqual(fmts, [0, 1, 3, 2, 3, 1, 0, 0])
        var decoder = RTMPChunkDecoder()
        XCTAssertEqual(try decodeAll(all, decoder: &decoder), messages)
    }

    func testFmt3AfterFmt0UsesFmt0TimestampAsDelta() throws {
        // Spec: a fmt 3 chunk starting a message after a fmt 0 header reuses the fmt 0 timestamp as delta.
        let bytes: [UInt8] = [0x04, 0, 0, 10, 0, 0, 1, 8, 1, 0, 0, 0, 0xAA, 0xC4, 0xBB]
        var decoder = RTMPChunkDecoder()
        let messages = try decodeAll(bytes, decoder: &decoder)
        XCTAssertEqual(messages.map(\.timestamp), [10, 20])
        XCTAssertEqual(messages.map(\.payload), [[0xAA], [0xBB]])
        XCTAssertEqual(messages[1].streamID, 1)
    }

    func testMultiChunkMessageAndByteByByteFeeding() throws {
        var encoder = RTMPChunkEncoder()
        let payload = (0..<1000).map { UInt8($0 & 0xFF) }
        let m = RTMPMessage(type: .video, streamID: 1, timestamp: 33, chunkStreamID: 4, payload: payload)
        let bytes = encoder.encode(m)
        // 1000 bytes at 128 per chunk = 8 chunks: one 12-byte header + 7 one-byte fmt 3 headers.
        XCTAssertEqual(bytes.count, 1000 + 12 + 7)
        XCTAssertEqual(bytes[12 + 128], 0xC4)
        var decoder = RTMPChunkDecoder()
        var got: [RTMPMessage] = []
        for b in bytes {
            decoder.append([b])
            while let msg = try decoder.nextMessage() { got.append(msg) }
        }
        XCTAssertEqual(got, [m])
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testExtendedTimestamp() throws {
        var encoder = RTMPChunkEncoder()
        let big: UInt32 = 0x0123_4567
        let m1 = RTMPMessage(type: .audio, streamID: 1, timestamp: big, chunkStreamID: 4, payload: Array(repeating: 7, count: 300))
        let b1 = encoder.encode(m1)
        XCTAssertEqual(Array(b1[1...3]), [0xFF, 0xFF, 0xFF])
        XCTAssertEqual(Array(b1[12...15]), [0x01, 0x23, 0x45, 0x67])
        // Continuation chunks (fmt 3) repeat the extended timestamp.
        XCTAssertEqual(b1[16 + 128], 0xC4)
        XCTAssertEqual(Array(b1[(17 + 128)...(20 + 128)]), [0x01, 0x23, 0x45, 0x67])
        let m2 = RTMPMessage(type: .audio, streamID: 1, timestamp: big + 0x0100_0000, chunkStreamID: 4, payload: [1])
        let b2 = encoder.encode(m2)  // delta 0x1000000 ≥ 0xFFFFFF → extended delta in a fmt 1 header
        XCTAssertEqual(b2[0] >> 6, 1)
        XCTAssertEqual(Array(b2[1...3]), [0xFF, 0xFF, 0xFF])
        XCTAssertEqual(Array(b2[8...11]), [0x01, 0x00, 0x00, 0x00])
        var decoder = RTMPChunkDecoder()
        XCTAssertEqual(try decodeAll(b1 + b2, decoder: &decoder), [m1, m2])
    }

    func testExtendedTimestampNotRepeatedOnContinuation() throws {
        // Some clients omit the extended timestamp on fmt 3 continuation chunks.
        var bytes: [UInt8] = [0x04, 0xFF, 0xFF, 0xFF, 0, 0, 130, 9, 1, 0, 0, 0, 0x01, 0x00, 0x00, 0x00]
        bytes += Array(repeating: 0x11, count: 128)
        bytes += [0xC4, 0x22, 0x33]
        // The decoder needs 4 bytes after a fmt 3 header to tell; the next message provides them.
        bytes += [0x05, 0, 0, 0, 0, 0, 1, 20, 0, 0, 0, 0, 0x05]
        var decoder = RTMPChunkDecoder()
        let messages = try decodeAll(bytes, decoder: &decoder)
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(messages.first?.timestamp, 0x0100_0000)
        XCTAssertEqual(messages.first?.payload.suffix(2), [0x22, 0x33])
    }

    func testChunkSizeChangeIsAppliedByBothSides() throws {
        var encoder = RTMPChunkEncoder()
        var bytes = encoder.encode(.setChunkSize(4096))
        XCTAssertEqual(bytes, [0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0x10, 0x00])
        XCTAssertEqual(encoder.chunkSize, 4096)
        let payload = Array(repeating: UInt8(5), count: 5000)
        let m = RTMPMessage(type: .video, streamID: 1, timestamp: 0, chunkStreamID: 6, payload: payload)
        let mb = encoder.encode(m)
        XCTAssertEqual(mb.count, 12 + 5000 + 1)  // two chunks
        bytes += mb
        var decoder = RTMPChunkDecoder()
        let messages = try decodeAll(bytes, decoder: &decoder)
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(decoder.chunkSize, 4096)
        XCTAssertEqual(messages.last, m)
    }

    func testInvalidChunkSizeIsAnError() {
        var encoder = RTMPChunkEncoder()
        encoder.appliesProtocolControl = false
        var decoder = RTMPChunkDecoder()
        decoder.append(encoder.encode(.setChunkSize(0)))
        XCTAssertThrowsError(try decoder.nextMessage())
    }

    func testInterleavedChunkStreamsAndLargeChunkStreamIDs() throws {
        var encoder = RTMPChunkEncoder()
        let a = RTMPMessage(type: .video, streamID: 1, timestamp: 1, chunkStreamID: 100, payload: Array(repeating: 0xA, count: 200))
        let b = RTMPMessage(type: .audio, streamID: 1, timestamp: 2, chunkStreamID: 1000, payload: Array(repeating: 0xB, count: 200))
        let ab = encoder.encode(a), bb = encoder.encode(b)
        XCTAssertEqual(Array(ab[0...1]), [0x00, 36])          // 2-byte basic header
        XCTAssertEqual(Array(bb[0...2]), [0x01, 0xA8, 0x03])  // 3-byte basic header (1000 − 64 = 936)
        // Interleave: first chunk of a, first chunk of b, rest of a, rest of b.
        let aFirst = 2 + 11 + 128, bFirst = 3 + 11 + 128
        let stream = Array(ab[..<aFirst]) + Array(bb[..<bFirst]) + Array(ab[aFirst...]) + Array(bb[bFirst...])
        var decoder = RTMPChunkDecoder()
        XCTAssertEqual(try decodeAll(stream, decoder: &decoder), [a, b])
    }

    func testAbortDiscardsPartialMessage() throws {
        var encoder = RTMPChunkEncoder()
        let big = RTMPMessage(type: .video, streamID: 1, timestamp: 0, chunkStreamID: 6, payload: Array(repeating: 1, count: 300))
        let bytes = encoder.encode(big)
        let partial = Array(bytes[..<(12 + 128)])
        let abort = encoder.encode(.abort(chunkStreamID: 6))
        let small = RTMPMessage(type: .video, streamID: 1, timestamp: 0, chunkStreamID: 6, payload: [9])
        var enc2 = RTMPChunkEncoder()
        let smallBytes = enc2.encode(small)
        var decoder = RTMPChunkDecoder()
        let messages = try decodeAll(partial + abort + smallBytes, decoder: &decoder)
        XCTAssertEqual(messages.map(\.type), [.abort, .video])
        XCTAssertEqual(messages.last?.payload, [9])
    }

    func testHeaderWithoutPreviousIsAnError() {
        var decoder = RTMPChunkDecoder()
        decoder.append([0x44, 0, 0, 0, 0, 0, 1, 9, 0xAA])
        XCTAssertThrowsError(try decoder.nextMessage()) { error in
            XCTAssertTrue(error is RTMPChunkError)
        }
    }

    func testOversizedMessageIsAnError() {
        var decoder = RTMPChunkDecoder()
        decoder.maxMessageSize = 1000
        decoder.append([0x04, 0, 0, 0, 0, 0x10, 0, 9, 1, 0, 0, 0])
        XCTAssertThrowsError(try decoder.nextMessage())
    }

    func testAggregateSplit() throws {
        let subs = [
            RTMPMessage(type: .video, streamID: 0, timestamp: 1000, chunkStreamID: 0, payload: [0x17, 0x01, 0, 0, 0, 1]),
            RTMPMessage(type: .audio, streamID: 0, timestamp: 1020, chunkStreamID: 0, payload: [0xAF, 0x01, 2]),
            RTMPMessage(type: .video, streamID: 0, timestamp: 1040, chunkStreamID: 0, payload: [0x27, 0x01, 0, 0, 0, 3]),
        ]
        var aggregate = RTMPAggregate.make(subs, streamID: 1, chunkStreamID: 6)
        aggregate.timestamp = 50  // the aggregate's own timestamp rebases the sub-messages
        let split = try RTMPAggregate.split(aggregate)
        XCTAssertEqual(split.map(\.timestamp), [50, 70, 90])
        XCTAssertEqual(split.map(\.type), [.video, .audio, .video])
        XCTAssertEqual(split.map(\.payload), subs.map(\.payload))
        XCTAssertEqual(split.map(\.streamID), [1, 1, 1])
        aggregate.payload.removeLast(6)
        XCTAssertThrowsError(try RTMPAggregate.split(aggregate))
    }

    func testHandshake() throws {
        var hs = RTMPHandshake()
        hs.uptimeMs = 0x0102_0304
        var input: [UInt8] = [3] + (0..<1536).map { UInt8($0 % 251) }
        let c1 = Array(input[1...])
        var partialInput = Array(input.prefix(100))
        XCTAssertEqual(try hs.step(&partialInput), .needMore)
        guard case .send(let out) = try hs.step(&input) else { return XCTFail("expected S0S1S2") }
        XCTAssertEqual(out.count, 1 + 1536 * 2)
        XCTAssertEqual(out[0], 3)
        XCTAssertEqual(Array(out[1...8]), [1, 2, 3, 4, 0, 0, 0, 0])
        XCTAssertEqual(Array(out[1537...]), c1)
        XCTAssertTrue(input.isEmpty)
        var c2: [UInt8] = Array(out[1...1536]) + [0xC3]
        XCTAssertEqual(try hs.step(&c2), .completed)
        XCTAssertEqual(c2, [0xC3])

        var bad = RTMPHandshake()
        var encrypted: [UInt8] = [6] + Array(repeating: 0, count: 1536)
        XCTAssertThrowsError(try bad.step(&encrypted))
    }

    func testCommandParsing() throws {
        let values: [AMF0Value] = [.string("publish"), .number(5), .null, .string("test?key=1"), .string("live")]
        let amf0 = RTMPMessage.command(values, streamID: 1)
        let c0 = try RTMPCommand(message: amf0)
        XCTAssertEqual(c0.name, "publish")
        XCTAssertEqual(c0.transactionID, 5)
        XCTAssertEqual(c0.arguments, [.string("test?key=1"), .string("live")])
        let amf3 = RTMPMessage(type: .commandAMF3, streamID: 1, chunkStreamID: 3, payload: [0] + AMF0.encode(values))
        XCTAssertEqual(try RTMPCommand(message: amf3), c0)
        XCTAssertEqual(RTMPSessionHandler.streamName("test?key=1"), "test")
        XCTAssertEqual(RTMPSessionHandler.fileName("../a/b"), "_.._a_b")
    }
}
