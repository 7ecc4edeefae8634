import Foundation
import XCTest
@testable import LivePush

/// A WHIP endpoint that is wrong or hostile: what it writes (`Link`, `Location`, the status
/// line, the SDP answer) is read without a trap and refused with a code, and the bearer token
/// goes to the endpoint's origin only. The servers are real (`LoopbackHTTPServer` on
/// 127.0.0.1); two servers on two ports are two origins.
final class WHIPHostileEndpointTests: XCTestCase {
    private static let token = "hostile-test-token-42"
    private static let answer = "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    private static let offer = answer

    private func response(_ status: String, _ fields: [String] = [], body: String = "") -> LoopbackHTTPServer.Reply {
        .respond("HTTP/1.1 \(status)\r\n" + fields.map { "\($0)\r\n" }.joined() + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
    }

    private func created(location: String, _ more: [String] = []) -> LoopbackHTTPServer.Reply {
        response("201 Created", ["Content-Type: application/sdp", "Location: \(location)"] + more, body: Self.answer)
    }

    private func client(_ url: String) throws -> WHIPClient {
        WHIPClient(endpoint: try PushURL(url), token: Self.token, timeout: .seconds(3))
    }

    private func assertCode(_ code: LivePushError.Code, _ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) {
            XCTAssertEqual(($0 as? LivePushError)?.code, code, "\($0)", file: file, line: line)
        }
    }

    // MARK: - Pure readers

    func testICEServerURIsOfHostileLinksAreNilNotATrap() {
        for url in ["stun:?", "turn:?", "stun:", "turn:", "stuns:?transport=udp", "stun:@", "turn:u@host", "stun:host/path",
                    "stun:host:0", "stun:host:65536", "stun:host:99999999999999999999", "stun:host:1a", "stun:host:", "stun::3478",
                    "stun:[::1", "stun:[]", "stun:[::1]x", "stun:[g::1]", "stun:ho st", "stun:h\u{85}st", "stun:hôst", ":", "?"] {
            XCTAssertNil(ICEServer(url: url, username: "u", credential: "p").webrtcbinURI, url)
        }
        XCTAssertEqual(ICEServer(url: "stun:[::1]:3478").webrtcbinURI, "stun://[::1]:3478")
        XCTAssertEqual(ICEServer(url: "STUN:stun.example.net").webrtcbinURI, "stun://stun.example.net")
        XCTAssertEqual(ICEServer(url: "turn:t.example.net:3478?transport=udp", username: "a@b", credential: "p/q").webrtcbinURI,
                       "turn://a%40b:p%2Fq@t.example.net:3478")
        // The answer that crashed the pusher: such links are skipped, the good one kept.
        let links = ["<stun:?>; rel=\"ice-server\"", "<turn:?>; rel=\"ice-server\"; username=\"u\"; credential=\"p\"",
                     "<stun:>; rel=ice-server, <stun:good.example.net:3478>; rel=ice-server"]
        XCTAssertEqual(ICEServerLinks.parse(links), [ICEServer(url: "stun:good.example.net:3478")])
        XCTAssertNil(PushOutput.firstURI(of: [ICEServer(url: "stun:?"), ICEServer(url: "turn:?")], scheme: "turn"))
        XCTAssertEqual(PushOutput.firstURI(of: [ICEServer(url: "stun:?"), ICEServer(url: "stun:s.example.net")], scheme: "stun"),
                       "stun://s.example.net")
    }

    func testLocationsThatAreNoURIAreRefusedWithEscapedText() throws {
        let base = try PushURL("https://whip.example.com/whip/endpoint")
        for bad in ["/r/\u{85}1", "/r/\u{9B}2J", "/r/\u{0}x", "/r/a b", "/r/é", "/r/\u{202E}x", "/r/\u{1B}[2J",
                    "/" + String(repeating: "a", count: LocationResolver.maxLength + 1), "http://", "https://[::1/x", "https://h:0/x"] {
            XCTAssertThrowsError(try LocationResolver.resolve(bad, against: base), bad.debugDescription) {
                let error = $0 as? LivePushError
                XCTAssertEqual(error?.code, .whipServerError)
                let text = error?.description ?? ""
                XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, text)
                XCTAssertLessThan(text.count, 1024)
            }
        }
    }

    func testSDPAnswersThatAreNoSDPAreRefused() {
        let bad: [String: SDPAnswer.Failure] = [
            "": .empty,
            "\r\n\r\n": .empty,
            "v=0\r\n\r\nm=video 9 RTP/AVP 96\r\n": .badLine(2, "not of the form x=value"),
            "v=1\r\nm=video 9 RTP/AVP 96\r\n": .notVersionZero,
            "v=0\r\ns=-\r\n": .noMedia,
            "v=0\r\nm=video 9 RTP/AVP 96\r\nno equals sign\r\n": .badLine(3, "not of the form x=value"),
            "v=0\r\nm=video 9\u{0}RTP/AVP 96\r\n": .badLine(2, "a control character"),
            "v=0\r\ns=\u{1B}[2J\r\nm=video 9 RTP/AVP 96\r\n": .badLine(2, "a control character"),
            "v=0\r\nX=upper\r\nm=video 9 RTP/AVP 96\r\n": .badLine(2, "not of the form x=value"),
            "v=0\r\n" + String(repeating: "m=video 9 RTP/AVP 96\r\n", count: 17): .tooManyMediaSections,
            "v=0\r\n" + String(repeating: "a=x\r\n", count: SDPAnswer.maxLines) + "m=audio 9 RTP/AVP 0\r\n": .tooManyLines,
            "v=0\r\na=" + String(repeating: "x", count: SDPAnswer.maxLineBytes) + "\r\nm=audio 9 RTP/AVP 0\r\n":
                .badLine(2, "longer than \(SDPAnswer.maxLineBytes) bytes"),
        ]
        for (text, failure) in bad {
            XCTAssertThrowsError(try SDPAnswer(text), String(text.prefix(40)).debugDescription) {
                XCTAssertEqual($0 as? SDPAnswer.Failure, failure)
            }
        }
        XCTAssertEqual(try SDPAnswer(Self.answer).mediaSections, 1)
        XCTAssertEqual(try SDPAnswer("v=0\nm=video 9 RTP/AVP 96\nm=audio 9 RTP/AVP 0").mediaSections, 2, "bare LFs, no final line end")
        XCTAssertEqual(try SDPAnswer(Self.answer + "\r\n\r\n").mediaSections, 1, "blank lines after the last are tolerated")
    }

    func testTerminalTextEscapesC1ControlsAndCapsTheLength() {
        XCTAssertEqual(TerminalText.escape("a\u{85}b\u{9B}2J\u{80}"), "a\\x85b\\x9b2J\\x80")
        XCTAssertEqual(TerminalText.escape(String(repeating: "x", count: 20), limit: 5), "xxxxx…")
    }

    // MARK: - Against loopback servers

    func testAStatusLineAndBodyWithControlsShowEscapedAndCut() throws {
        let reason = "Service \u{85}Unavailable \u{9B}2J \u{1B}]0;owned\u{7} \u{202E}" + String(repeating: "r", count: 5000)
        let body = "down \u{9D}0;title\u{9C} " + String(repeating: "b", count: 100_000)
        let server = try LoopbackHTTPServer([response("503 \(reason)", body: body)])
        defer { server.stop() }
        var thrown: LivePushError?
        XCTAssertThrowsError(try client(server.url("/whip")).publish(offer: Self.offer)) { thrown = $0 as? LivePushError }
        let error = try XCTUnwrap(thrown)
        XCTAssertEqual(error.code, .whipServerError)
        let text = error.description
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, text)
        XCTAssertTrue(text.contains("\\x85Unavailable \\x9b2J \\x1b]0;owned\\x07 \\u{202E}"), text)
        XCTAssertLessThan(text.count, 600, "the reason and the body are cut: \(text)")
    }

    func testARedirectToAnotherOriginGetsNoToken() throws {
        let other = try LoopbackHTTPServer([created(location: "/whip/resource/1"), response("200 OK")])
        defer { other.stop() }
        let endpoint = try LoopbackHTTPServer([response("307 Temporary Redirect", ["Location: \(other.url("/whip/node-2"))"])])
        defer { endpoint.stop() }
        let whip = try client(endpoint.url("/whip/endpoint"))
        let session = try whip.publish(offer: Self.offer)
        XCTAssertEqual(session.resource.port, other.port)
        try whip.delete(session)

        XCTAssertEqual(endpoint.requests.first?.value(of: "Authorization"), "Bearer \(Self.token)", "the endpoint's origin gets it")
        let elsewhere = other.requests
        XCTAssertEqual(elsewhere.map(\.method), ["POST", "DELETE"])
        XCTAssertEqual(elsewhere.first?.body, Self.offer, "the offer is redirected")
        XCTAssertEqual(elsewhere.compactMap { $0.value(of: "Authorization") }, [], "another origin never sees the token")
    }

    func testASessionOnAnotherOriginGetsNoTokenForPatchOrDelete() throws {
        let other = try LoopbackHTTPServer([response("204 No Content"), response("200 OK")])
        defer { other.stop() }
        // Same host and port spelt "localhost" is another origin too (RFC 6454 compares the host as written).
        let endpoint = try LoopbackHTTPServer([
            created(location: other.url("/whip/resource/9")),
            created(location: "http://localhost:\(try XCTUnwrap(other.port))/whip/resource/10"),
        ])
        defer { endpoint.stop() }
        let whip = try client(endpoint.url("/whip/endpoint"))
        let session = try whip.publish(offer: Self.offer)
        XCTAssertEqual(try whip.patch(session, sdpFragment: "a=end-of-candidates\r\n"), .applied)
        try whip.delete(session)
        let second = try whip.publish(offer: Self.offer)
        XCTAssertFalse(whip.carriesToken(to: second.resource), "localhost is not 127.0.0.1")
        XCTAssertTrue(whip.carriesToken(to: try PushURL(endpoint.url("/whip/resource/1"))))

        XCTAssertEqual(endpoint.requests.map { $0.value(of: "Authorization") }, Array(repeating: "Bearer \(Self.token)", count: 2))
        XCTAssertEqual(other.requests.map(\.method), ["PATCH", "DELETE"])
        XCTAssertEqual(other.requests.compactMap { $0.value(of: "Authorization") }, [], "another origin never sees the token")
    }

    func testNothingFromHTTPSGoesOverHTTP() throws {
        let plain = try LoopbackHTTPServer([response("200 OK")])
        defer { plain.stop() }
        let whip = try client("https://127.0.0.1:9/whip/endpoint")
        // A session an https:// endpoint placed on http:// (as a 201 would): no PATCH, no DELETE goes there.
        let session = WHIPSession(answer: Self.answer, resource: try PushURL(plain.url("/whip/resource/1")), etag: nil, iceServers: [])
        assertCode(.whipServerError) { try whip.delete(session) }
        assertCode(.whipServerError) { _ = try whip.patch(session, sdpFragment: "a=end-of-candidates\r\n") }
        // And the 201 that names it is refused.
        let message = try HTTPResponseParser.parse(Array(
            "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: \(plain.url("/r/1"))\r\nContent-Length: \(Self.answer.utf8.count)\r\n\r\n\(Self.answer)".utf8))
        assertCode(.whipServerError) { _ = try whip.session(from: message, at: whip.endpoint) }
        plain.stop()
        XCTAssertEqual(plain.requests.count, 0, "nothing reached the http:// server")
    }

    func testA201WithAnAnswerThatIsNoSDPIsACodedError() throws {
        let server = try LoopbackHTTPServer([
            response("201 Created", ["Content-Type: application/sdp", "Location: /r/1"], body: "v=0\r\ns=\u{0}\r\nm=video 9 RTP/AVP 96\r\n"),
            response("201 Created", ["Content-Type: application/sdp", "Location: /r/\u{85}"], body: Self.answer),
        ])
        defer { server.stop() }
        let whip = try client(server.url("/whip"))
        assertCode(.whipServerError) { _ = try whip.publish(offer: Self.offer) }
        assertCode(.whipServerError) { _ = try whip.publish(offer: Self.offer) }
    }
}
