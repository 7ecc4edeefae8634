import Foundation
@testable import LivePush
import XCTest

/// The HLS upload store against a scripted origin: the requests it sends, its bounded retries,
/// and what a hostile origin's answer becomes in an error.
final class HLSHTTPStoreTests: XCTestCase {
    private func response(_ status: String, body: String = "") -> LoopbackHTTPServer.Reply {
        .respond("HTTP/1.1 \(status)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
    }

    private func store(_ server: LoopbackHTTPServer, query: String = "") throws -> HLSHTTPStore {
        HLSHTTPStore(playlist: try PushURL(server.url("/live/index.m3u8") + query), token: nil, tls: TLSOptions(), timeout: .seconds(5))
    }

    func testAPutIsTriedAgainAfterA5xxAndGoesToThePlaylistsDirectory() throws {
        let server = try LoopbackHTTPServer([response("503 Busy"), response("502 Bad Gateway"), response("201 Created")])
        defer { server.stop() }
        try store(server, query: "?hls_time=1&sig=abc").perform(.put(name: "index0.ts", bytes: Array("GGGG".utf8)))
        let requests = server.requests
        XCTAssertEqual(requests.count, 3)
        XCTAssertEqual(requests.map(\.method), ["PUT", "PUT", "PUT"])
        XCTAssertEqual(requests.first?.target, "/live/index0.ts?sig=abc", "the origin's own query, not the hls_ options")
        XCTAssertEqual(requests.first?.value(of: "Content-Type"), "video/mp2t")
        XCTAssertEqual(requests.first?.body, "GGGG")
        XCTAssertNil(requests.first?.value(of: "Authorization"))
    }

    func testADeleteOfWhatIsGoneIsDoneAndA4xxIsFinal() throws {
        let server = try LoopbackHTTPServer([response("404 Not Found"), response("400 Bad Request", body: "no")])
        defer { server.stop() }
        let store = try store(server)
        try store.perform(.delete(name: "index0.ts"))
        XCTAssertThrowsError(try store.perform(.put(name: "index.m3u8", bytes: [0x23]))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
            XCTAssertTrue("\(error)".contains("HTTP 400"), "\(error)")
        }
        XCTAssertEqual(server.requests.map(\.method), ["DELETE", "PUT"], "a 400 is not tried again")
        XCTAssertEqual(server.requests.last?.value(of: "Content-Type"), "application/vnd.apple.mpegurl")
    }

    func testAHostileOriginsAnswerIsCutAndEscaped() throws {
        let hostile = "\u{1B}[2J\u{202E}" + String(repeating: "x", count: 5_000)
        let server = try LoopbackHTTPServer([response("418 \u{1B}[31mteapot", body: hostile)])
        defer { server.stop() }
        XCTAssertThrowsError(try store(server).perform(.put(name: "index0.ts", bytes: [1]))) { error in
            let text = "\(error)"
            XCTAssertFalse(text.contains("\u{1B}"), text)
            XCTAssertFalse(text.contains("\u{202E}"), text)
            XCTAssertLessThan(text.count, 600, text)
        }
    }
}
