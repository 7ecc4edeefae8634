import LivePushWire
import XCTest

/// The publisher's own media chunking (one write per send turn), read back by the receiver's
/// chunk decoder. Pure logic beside the nginx and ffprobe tests that push through it.
final class WireMediaChunkerTests: XCTestCase {
    private struct Sent {
        let csid: Int
        let type: UInt8
        let timestamp: UInt32
        let prefix: [UInt8]
        let payload: [UInt8]
    }

    private func roundTrip(_ messages: [Sent], chunkSize: Int) throws -> [RTMPMessage] {
        var chunker = RTMPMediaChunker(chunkSize: chunkSize)
        var bytes: [UInt8] = []
        for message in messages {
            let before = bytes.count
            chunker.append(chunkStreamID: message.csid, typeID: message.type, timestamp: message.timestamp, streamID: 1,
                           prefix: FLVTagPrefix(message.prefix), payload: message.payload, into: &bytes)
            XCTAssertLessThanOrEqual(bytes.count - before, chunker.maximumBytes(bodySize: message.prefix.count + message.payload.count))
        }
        var decoder = RTMPChunkDecoder(chunkSize: chunkSize)
        decoder.append(bytes)
        var decoded: [RTMPMessage] = []
        while let message = try decoder.nextMessage() { decoded.append(message) }
        return decoded
    }

    func testInterleavedTracksAcrossChunksComeBackWhole() throws {
        let big = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let messages = [
            Sent(csid: 6, type: 9, timestamp: 0, prefix: [0x17, 1, 0, 0, 0], payload: big),
            Sent(csid: 4, type: 8, timestamp: 0, prefix: [0xAF, 1], payload: [1, 2, 3]),
            Sent(csid: 4, type: 8, timestamp: 23, prefix: [0xAF, 1], payload: [4, 5, 6]),
            Sent(csid: 6, type: 9, timestamp: 40, prefix: [0x27, 1, 0, 0, 0], payload: Array(big.prefix(4096 - 5))),
            Sent(csid: 6, type: 9, timestamp: 80, prefix: [0x27, 1, 0, 0, 0], payload: Array(big.prefix(4096))),
            // Back in time (a data message for an earlier cue): a full header again.
            Sent(csid: 5, type: 18, timestamp: 100, prefix: [], payload: [2, 0, 1, 0x41]),
            Sent(csid: 5, type: 18, timestamp: 50, prefix: [], payload: [2, 0, 1, 0x42]),
        ]
        let decoded = try roundTrip(messages, chunkSize: 4096)
        XCTAssertEqual(decoded.count, messages.count)
        for (sent, got) in zip(messages, decoded) {
            XCTAssertEqual(got.typeID, sent.type)
            XCTAssertEqual(got.timestamp, sent.timestamp)
            XCTAssertEqual(got.streamID, 1)
            XCTAssertEqual(Int(got.chunkStreamID), sent.csid)
            XCTAssertEqual(got.payload, sent.prefix + sent.payload)
        }
    }

    /// Past 4 h 39 min a timestamp needs the extended field, repeated on every continuation.
    func testExtendedTimestampsOfA24x7Stream() throws {
        let payload = [UInt8](repeating: 0x5A, count: 300)
        let late: UInt32 = 0x0100_0000 + 5
        let messages = [
            Sent(csid: 6, type: 9, timestamp: late, prefix: [0x17, 1, 0, 0, 0], payload: payload),
            Sent(csid: 6, type: 9, timestamp: late + 40, prefix: [0x27, 1, 0, 0, 0], payload: payload),
            Sent(csid: 6, type: 9, timestamp: 10, prefix: [0x27, 1, 0, 0, 0], payload: payload),
        ]
        let decoded = try roundTrip(messages, chunkSize: 128)
        XCTAssertEqual(decoded.map(\.timestamp), messages.map(\.timestamp))
        XCTAssertEqual(decoded.map(\.payload), messages.map { $0.prefix + $0.payload })
    }
}
