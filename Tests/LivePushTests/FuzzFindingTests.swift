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

    /// whip-response, crash-token-in-location: a `Location` that quoted the bearer token (and was
    /// no URI, for its space) was shown in the error as the endpoint wrote it: LocationResolver
    /// does not know the token. The client now masks it in every error it throws.
    func testALocationQuotingTheTokenIsShownWithTheTokenMasked() throws {
        for token in ["fuzz-token-0123456789", "back\\slash-token-42"] {
            let answer = "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
            let response = try HTTPResponseParser.parse(Array(("HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\n"
                + "Location: https://media.example.net/token \(token)[[\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)").utf8))
            let endpoint = try PushURL("https://whip.example.com/whip/endpoint")
            let client = WHIPClient(endpoint: endpoint, token: token, timeout: .seconds(1))
            XCTAssertThrowsError(try client.session(from: response, at: endpoint)) {
                let error = $0 as? LivePushError
                XCTAssertEqual(error?.code, .whipServerError)
                let text = error?.description ?? ""
                XCTAssertFalse(text.contains(token) || text.contains(TerminalText.escape(token)), text)
                XCTAssertTrue(text.contains(Redaction.mask(token)), text)
            }
        }
    }
}
