import XCTest

@testable import LivePush
@testable import LivePushWire

/// One test per fuzzing finding (its input is kept in Tests/Fuzz/Regressions/<target>/ and
/// replayed by FuzzCorpusReplayTests); these pin down the behaviour that fixed it.
final class FuzzFindingTests: XCTestCase {
    /// chunk-stream, oom-reserves-announced-length: a 12-byte header announcing a 16 MiB message
    /// made the decoder reserve 16 MiB before any payload had arrived.
    func testChunkDecoderGrowsWithThePayloadNotTheAnnouncedLength() throws {
        var decoder = RTMPChunkDecoder()
        // fmt 0 on chunk stream 3: timestamp 0, length 0xFFFFFF, video, stream 1; then one full chunk.
        decoder.append([0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 9, 1, 0, 0, 0] + Array(repeating: 0xAB, count: 128))
        XCTAssertNil(try decoder.nextMessage())
        let payload = try XCTUnwrap(decoder.streams[3]).payload
        XCTAssertEqual(payload.count, 128)
        XCTAssertLessThan(payload.capacity, 64 * 1024)
    }

    /// channels-config, crash-query-before-scheme: an output "r?hhh…tmp://h/a4s" (a "?" before the
    /// "://") made redactStreamKey build a range ending before it began, and `PushURL`'s refusal,
    /// which redacts the URL it quotes, trapped: one POST /channels would have ended the process.
    func testRedactingAStringWhoseQueryComesBeforeTheSchemeIsSafe() {
        XCTAssertEqual(Redaction.redactStreamKey("r?hhh-tmp://h/a4s"), "****?hhh-****")
        XCTAssertEqual(Redaction.redactStreamKey("x?y://h/app/key?k=secret"), "****?y://****")
        XCTAssertThrowsError(try PushURL("r?hhhhtmp://h/a4s")) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidURL)
        }
    }
}
