import Foundation
import XCTest
@testable import LivePush

/// The WHIP client's HTTP: the response parser on canned bytes, `Location` resolution, `Link`
/// parsing, and the client against `LoopbackHTTPServer`, a real server on 127.0.0.1.
final class WHIPClientTests: XCTestCase {
    private static let token = "secret-token-0123456789"
    private static let offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    private static let answer = "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"

    // MARK: - Parser

    private func parse(_ text: String) throws -> HTTPMessage {
        try HTTPResponseParser.parse(Array(text.utf8))
    }

    /// Feeds `text` a byte at a time: every split point of every framing must work.
    private func parseBytewise(_ text: String) throws -> HTTPMessage? {
        var parser = HTTPResponseParser()
        for byte in text.utf8 {
            if let message = try parser.feed([byte]) { return message }
        }
        return try parser.finish()
    }

    func testParsesContentLengthBody() throws {
        let text = "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nContent-Length: 5\r\n\r\nv=0\r\nEXTRA"
        for message in [try parse(text), try parseBytewise(text)] {
            XCTAssertEqual(message?.status, 201)
            XCTAssertEqual(message?.reason, "Created")
            XCTAssertEqual(message?.value(of: "content-type"), "application/sdp")
            XCTAssertEqual(message?.text, "v=0\r\n", "the body ends at Content-Length")
        }
    }

    func testParsesChunkedBodyWithExtensionsAndTrailers() throws {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;name=value\r\nWiki\r\n5\r\npedia\r\nA\r\n in chunks\r\n0\r\nX-Trailer: 1\r\n\r\n"
        for message in [try parse(text), try parseBytewise(text)] {
            XCTAssertEqual(message?.text, "Wikipedia in chunks")
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWikipedia\r\n0\r\n\r\n"))
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"))
    }

    func testBodyUntilCloseAndTruncation() throws {
        var parser = HTTPResponseParser()
        XCTAssertNil(try parser.feed(Array("HTTP/1.0 200 OK\r\n\r\nuntil the end".utf8)))
        XCTAssertEqual(try parser.finish().text, "until the end")
        XCTAssertThrowsError(try parse("HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\nv=0")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .truncated)
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 201 Created\r\nContent-Le")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .truncated)
        }
    }

    func testFoldedAndRepeatedLinkFieldsCaseInsensitively() throws {
        let text = "HTTP/1.1 201 Created\r\n"
            + "Link: <stun:stun.example.net>; rel=\"ice-server\",\r\n"
            + "\t<turn:turn.example.net?transport=udp>; rel=\"ice-server\";\r\n"
            + "  username=\"user\"; credential=\"pass\"; credential-type=\"password\"\r\n"
            + "LINK: <stun:second.example.net:3478>; rel=ice-server\r\n"
            + "Content-Length: 0\r\n\r\n"
        let message = try parse(text)
        XCTAssertEqual(message.values(of: "link").count, 2)
        XCTAssertEqual(message.values(of: "Link")[0],
                       "<stun:stun.example.net>; rel=\"ice-server\", <turn:turn.example.net?transport=udp>; rel=\"ice-server\"; username=\"user\"; credential=\"pass\"; credential-type=\"password\"")
        XCTAssertEqual(ICEServerLinks.parse(message.values(of: "link")), [
            ICEServer(url: "stun:stun.example.net"),
            ICEServer(url: "turn:turn.example.net?transport=udp", username: "user", credential: "pass"),
            ICEServer(url: "stun:second.example.net:3478"),
        ])
    }

    func testInterimResponsesAndBodylessStatuses() throws {
        let message = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nETag: \"x\"\r\n\r\n")
        XCTAssertEqual(message.status, 204)
        XCTAssertEqual(message.value(of: "etag"), "\"x\"")
        var parser = HTTPResponseParser()
        XCTAssertNotNil(try parser.feed(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)), "a 204 is complete without waiting for the close")
    }

    func testRefusesMalformedResponses() {
        for text in [
            "HTTP/1.1 abc Nope\r\n\r\n", "SIP/2.0 200 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\nName : value\r\n\r\n", "HTTP/1.1 200 OK\r\n folded first\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        ] {
            XCTAssertThrowsError(try parse(text), text) {
                guard case .malformed = $0 as? HTTPResponseParser.Failure else { return XCTFail("\(text): \($0)") }
            }
        }
    }

    func testBoundsHeadAndBody() throws {
        let bigField = "X-Big: " + String(repeating: "a", count: 70 * 1024) + "\r\n"
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n\(bigField)\r\n")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .headersTooLarge)
        }
        // Without a line end the parser must not wait for more than 64 KiB either.
        var parser = HTTPResponseParser()
        XCTAssertThrowsError(try parser.feed(Array(("HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 65 * 1024)).utf8))) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .headersTooLarge)
        }
        let manyFields = String(repeating: "X-F: 0123456789012345678901234567890123456789\r\n", count: 2000)
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n\(manyFields)\r\n")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .headersTooLarge)
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 201 Created\r\nContent-Length: 1048577\r\n\r\n")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .bodyTooLarge)
        }
        let chunk = "80000\r\n" + String(repeating: "b", count: 0x80000) + "\r\n"
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + "1\r\nb\r\n0\r\n\r\n")) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .bodyTooLarge)
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "c", count: 1024 * 1024 + 1))) {
            XCTAssertEqual($0 as? HTTPResponseParser.Failure, .bodyTooLarge)
        }
        XCTAssertEqual(try parse("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "c", count: 1024 * 1024)).body.count, 1024 * 1024)
    }

    // MARK: - Location and Link

    func testResolvesLocationAgainstTheEndpoint() throws {
        let endpoint = try PushURL("https://whip.example.com:8443/whip/endpoint/abc?room=1")
        func resolve(_ location: String) throws -> String {
            let url = try LocationResolver.resolve(location, against: endpoint)
            return "\(url.scheme.rawValue)://\(LocationResolver.authority(of: url))\(url.app)" + (url.query.isEmpty ? "" : "?\(url.query)")
        }
        XCTAssertEqual(try resolve("https://media.example.com/whip/resource/1"), "https://media.example.com/whip/resource/1")
        XCTAssertEqual(try resolve("http://[::1]:8080/r"), "http://[::1]:8080/r")
        XCTAssertEqual(try resolve("/whip/resource/1"), "https://whip.example.com:8443/whip/resource/1")
        XCTAssertEqual(try resolve("resource/1"), "https://whip.example.com:8443/whip/endpoint/resource/1")
        XCTAssertEqual(try resolve("../resource/1?sid=2#fragment"), "https://whip.example.com:8443/whip/resource/1?sid=2")
        XCTAssertEqual(try resolve("./../../../x"), "https://whip.example.com:8443/x")
        XCTAssertEqual(try resolve("//cdn.example.com/r/2"), "https://cdn.example.com/r/2")
        XCTAssertEqual(try resolve("?session=9"), "https://whip.example.com:8443/whip/endpoint/abc?session=9")
        XCTAssertEqual(try resolve(" /trimmed "), "https://whip.example.com:8443/trimmed")
        for bad in ["rtmp://host/app/stream", "ftp://host/x", "https://bad host/x"] {
            XCTAssertThrowsError(try LocationResolver.resolve(bad, against: endpoint), bad) {
                XCTAssertEqual(($0 as? LivePushError)?.code, .whipServerError)
            }
        }
    }

    func testParsesLinkFieldsOfRFC9725() {
        let servers = ICEServerLinks.parse([
            "<stun:stun.example.net>; rel=\"ice-server\"",
            "<turn:turn.example.net?transport=udp>; rel=\"ice-server\"; username=\"user\"; credential=\"pass\"; credential-type=\"password\"",
            // Several in one field; a comma and a semicolon inside quotes; rel listing two types;
            // another relation, a URI that is no ICE server, and an unknown credential type skipped.
            "<turns:t.example.net:443?transport=tcp>; rel=\"ice-server other\"; username=\"a,b\"; credential=\"p;\\\"q\", "
                + "<https://example.net/doc>; rel=\"help\", <http://x>; rel=\"ice-server\", "
                + "<turn:o.example.net>; rel=\"ice-server\"; credential-type=\"oauth\", garbage, <stun:last.example.net>;rel=ice-server",
        ])
        XCTAssertEqual(servers, [
            ICEServer(url: "stun:stun.example.net"),
            ICEServer(url: "turn:turn.example.net?transport=udp", username: "user", credential: "pass"),
            ICEServer(url: "turns:t.example.net:443?transport=tcp", username: "a,b", credential: "p;\"q"),
            ICEServer(url: "stun:last.example.net"),
        ])
        XCTAssertFalse(servers[1].description.contains("pass"), "the credential is masked in logs")
        XCTAssertEqual(ICEServerLinks.parse(["", "<stun:unterminated", "; rel=ice-server"]), [])
    }

    // MARK: - Against a loopback server

    private func client(_ server: LoopbackHTTPServer, path: String = "/whip/endpoint?room=1", timeout: Duration = .seconds(3)) throws -> WHIPClient {
        WHIPClient(endpoint: try PushURL(server.url(path)), token: Self.token, tls: TLSOptions(), timeout: timeout)
    }

    private func response(_ status: String, _ fields: [String] = [], body: String = "") -> LoopbackHTTPServer.Reply {
        .respond("HTTP/1.1 \(status)\r\n" + fields.map { "\($0)\r\n" }.joined() + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
    }

    func testPublishPostsTheOfferAndReadsTheAnswer() throws {
        // The answer comes chunked, with a relative Location and the ICE servers in two Link fields.
        let chunked = String(Self.answer.prefix(10)).utf8.count
        let body = String(format: "%x", chunked) + "\r\n" + Self.answer.prefix(10) + "\r\n"
            + String(format: "%x", Self.answer.utf8.count - chunked) + "\r\n" + Self.answer.dropFirst(10) + "\r\n0\r\n\r\n"
        let server = try LoopbackHTTPServer([.respond(
            "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: resource/42\r\nETag: \"e1\"\r\n"
                + "Link: <stun:stun.example.net>; rel=\"ice-server\"\r\n"
                + "Link: <turn:turn.example.net?transport=udp>; rel=\"ice-server\"; username=\"user\"; credential=\"pass\"; credential-type=\"password\"\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + body)])
        defer { server.stop() }
        let session = try client(server).publish(offer: Self.offer)

        XCTAssertEqual(session.answer, Self.answer)
        XCTAssertEqual(session.resource.host, "127.0.0.1")
        XCTAssertEqual(session.resource.port, server.port)
        XCTAssertEqual(session.resource.app, "/whip/resource/42")
        XCTAssertEqual(session.etag, "\"e1\"")
        XCTAssertEqual(session.iceServers, [
            ICEServer(url: "stun:stun.example.net"),
            ICEServer(url: "turn:turn.example.net?transport=udp", username: "user", credential: "pass"),
        ])
        let request = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/whip/endpoint?room=1")
        XCTAssertEqual(request.value(of: "Host"), "127.0.0.1:\(server.port)")
        XCTAssertEqual(request.value(of: "Content-Type"), "application/sdp")
        XCTAssertEqual(request.value(of: "Authorization"), "Bearer \(Self.token)")
        XCTAssertEqual(request.body, Self.offer)
    }

    func testUnauthorizedIsTokenInvalidAndNeverShowsTheToken() throws {
        // The server echoes the token back, as some do: the error must still not carry it.
        let server = try LoopbackHTTPServer([
            response("401 Unauthorized", ["WWW-Authenticate: Bearer"], body: "bad token \(Self.token)"),
            response("403 Forbidden \(Self.token)"),
        ])
        defer { server.stop() }
        let whip = try client(server)
        for _ in 0..<2 {
            XCTAssertThrowsError(try whip.publish(offer: Self.offer)) {
                let error = $0 as? LivePushError
                XCTAssertEqual(error?.code, .tokenInvalid)
                XCTAssertFalse("\(String(describing: error))".contains(Self.token), "\(String(describing: error))")
                XCTAssertFalse((error?.message ?? "").contains(Self.token))
                XCTAssertTrue((error?.message ?? "").contains(Redaction.mask(Self.token)), error?.message ?? "")
            }
        }
        XCTAssertEqual(server.requests.count, 2)
    }

    func testNotFoundAndServerErrorsAndNonWHIPAnswers() throws {
        let server = try LoopbackHTTPServer([
            response("404 Not Found"),
            response("503 Service Unavailable", ["Retry-After: 5"]),
            response("201 Created", ["Location: /r/1"]),
            response("200 OK", ["Content-Type: application/sdp", "Location: /r/1"], body: Self.answer),
            response("201 Created", ["Content-Type: application/sdp"], body: Self.answer),
            .respond("HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: /r/1\r\nContent-Length: 500\r\n\r\nv=0\r\n"),
        ])
        defer { server.stop() }
        let whip = try client(server)
        let expected: [LivePushError.Code] = [
            .whipEndpointNotFound, .whipServerError,
            .whipServerError, // 201 without SDP
            .whipServerError, // 200 is no WHIP answer
            .whipServerError, // no Location
            .whipServerError, // closed before the body was complete
        ]
        for code in expected {
            XCTAssertThrowsError(try whip.publish(offer: Self.offer)) {
                XCTAssertEqual(($0 as? LivePushError)?.code, code, "\($0)")
            }
        }
        XCTAssertEqual(server.requests.count, expected.count)
    }

    /// The descriptors this process has open: the client and the server must leave none behind.
    private func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    func testServerThatNeverAnswersTimesOutWithinTheTimeout() throws {
        let descriptors = try openDescriptors()
        let server = try LoopbackHTTPServer([.silent])
        defer { server.stop() }
        let started = ContinuousClock.now
        XCTAssertThrowsError(try client(server, timeout: .milliseconds(600)).publish(offer: Self.offer)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .whipTimeout, "\($0)")
        }
        let elapsed = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(550))
        XCTAssertLessThan(elapsed, .seconds(2))
        XCTAssertEqual(server.requests.count, 1, "the request did arrive")
        server.stop()
        XCTAssertEqual(try openDescriptors(), descriptors, "every socket is closed")
    }

    func testRefusedConnectionIsConnectionRefused() throws {
        let server = try LoopbackHTTPServer([])
        let url = server.url("/whip")
        server.stop() // the port is closed now
        XCTAssertThrowsError(try WHIPClient(endpoint: PushURL(url), token: nil, timeout: .seconds(2)).publish(offer: Self.offer)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .connectionRefused, "\($0)")
        }
    }

    func testPatchAndDeleteGoToTheResourceWithTheToken() throws {
        let descriptors = try openDescriptors()
        let server = try LoopbackHTTPServer([
            response("201 Created", ["Content-Type: application/sdp", "Location: /whip/resource/7?sid=x", "ETag: \"v1\""], body: Self.answer),
            .respond("HTTP/1.1 204 No Content\r\n\r\n"),
            response("405 Method Not Allowed"),
            response("412 Precondition Failed"),
            response("200 OK"),
            response("404 Not Found"),
        ])
        defer { server.stop() }
        let whip = try client(server)
        let session = try whip.publish(offer: Self.offer)
        let fragment = "a=ice-ufrag:EsAw\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\na=candidate:1 1 UDP 2130706431 192.0.2.1 9 typ host\r\n"
        XCTAssertEqual(try whip.patch(session, sdpFragment: fragment), .applied)
        XCTAssertEqual(try whip.patch(session, sdpFragment: fragment), .notSupported)
        XCTAssertThrowsError(try whip.patch(session, sdpFragment: fragment)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .whipServerError)
        }
        try whip.delete(session)
        XCTAssertThrowsError(try whip.delete(session)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .whipEndpointNotFound)
        }

        let requests = server.requests
        XCTAssertEqual(requests.map(\.method), ["POST", "PATCH", "PATCH", "PATCH", "DELETE", "DELETE"])
        let patch = requests[1]
        XCTAssertEqual(patch.target, "/whip/resource/7?sid=x")
        XCTAssertEqual(patch.value(of: "Content-Type"), "application/trickle-ice-sdpfrag")
        XCTAssertEqual(patch.value(of: "If-Match"), "\"v1\"")
        XCTAssertEqual(patch.value(of: "Authorization"), "Bearer \(Self.token)")
        XCTAssertEqual(patch.body, fragment)
        let delete = requests[4]
        XCTAssertEqual(delete.target, "/whip/resource/7?sid=x")
        XCTAssertEqual(delete.value(of: "Authorization"), "Bearer \(Self.token)")
        XCTAssertEqual(delete.body, "")
        server.stop()
        XCTAssertEqual(try openDescriptors(), descriptors, "every socket is closed")
    }

    func testFollowsOneRedirectWithTheSameMethodAndBody() throws {
        let server = try LoopbackHTTPServer([
            response("307 Temporary Redirect", ["Location: /whip/node-2"]),
            response("201 Created", ["Content-Type: application/sdp", "Location: resource/1"], body: Self.answer),
            response("308 Permanent Redirect", ["Location: /a"]),
            response("307 Temporary Redirect", ["Location: /b"]),
        ])
        defer { server.stop() }
        let whip = try client(server)
        let session = try whip.publish(offer: Self.offer)
        XCTAssertEqual(session.resource.app, "/whip/resource/1", "resolved against the URL that answered")
        XCTAssertThrowsError(try whip.publish(offer: Self.offer)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .whipServerError, "a second redirect is not followed")
        }
        let requests = server.requests
        XCTAssertEqual(requests.map(\.target), ["/whip/endpoint?room=1", "/whip/node-2", "/whip/endpoint?room=1", "/a"])
        XCTAssertEqual(requests.map(\.method), ["POST", "POST", "POST", "POST"])
        XCTAssertEqual(requests[1].body, Self.offer)
        XCTAssertEqual(requests[1].value(of: "Authorization"), "Bearer \(Self.token)")
    }

    func testRequestRefusesATokenThatWouldInjectAField() throws {
        let url = try PushURL("http://127.0.0.1:9/whip")
        XCTAssertThrowsError(try WHIPClient.request("POST", to: url, fields: [], token: "abc\r\nX-Evil: 1", body: "")) {
            let error = $0 as? LivePushError
            XCTAssertEqual(error?.code, .tokenInvalid)
            XCTAssertFalse(error?.message.contains("abc") ?? true)
        }
        let bytes = try WHIPClient.request("DELETE", to: url, fields: [], token: nil, body: nil)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self),
                       "DELETE /whip HTTP/1.1\r\nHost: 127.0.0.1:9\r\nUser-Agent: LivePush\r\nConnection: close\r\n\r\n")
    }
}
