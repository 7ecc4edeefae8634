import XCTest
@testable import LivePush

/// The HLS input's fetcher against a scripted HTTP server: it loads the playlist, fetches each
/// segment once, skips one that 404s (the next starts afresh and takes its cues), marks a
/// discontinuity, and says when an ended playlist has nothing more.
final class HLSFetcherTests: XCTestCase {
    private static func ok(_ body: String, type: String = "video/mp2t") -> LoopbackHTTPServer.Reply {
        .respond("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
    }

    func testASegmentThat404sIsSkippedAndADiscontinuityStartsAfresh() throws {
        let playlist = """
        #EXTM3U
        #EXT-X-TARGETDURATION:1
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:1,
        s0.ts
        #EXT-X-CUE-OUT:DURATION=5
        #EXTINF:1,
        s1.ts
        #EXTINF:1,
        s2.ts
        #EXT-X-DISCONTINUITY
        #EXT-X-CUE-IN
        #EXTINF:1,
        s3.ts
        #EXT-X-ENDLIST

        """
        let server = try LoopbackHTTPServer([
            Self.ok(playlist, type: "application/vnd.apple.mpegurl"), Self.ok("zero"),
            .respond("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            Self.ok("two"), Self.ok("three"),
        ])
        defer { server.stop() }
        let queue = HLSSegmentQueue(capacity: 8)
        let url = try HLSURL(server.url("/live/index.m3u8"))
        let fetcher = HLSFetcher(url: url, name: url.description, client: HLSHTTPClient(tls: TLSOptions()), queue: queue,
                                 clock: SystemMonotonicClock(), timeout: .seconds(3), families: Set(HLSTagFamily.allCases))
        fetcher.start()
        defer { queue.stop() }
        var taken: [HLSFetchedSegment] = []
        while taken.count < 3, let segment = queue.take(timeout: .seconds(5)) { taken.append(segment) }
        XCTAssertEqual(taken.map(\.sequence), [0, 2, 3])
        XCTAssertEqual(taken.map { String(decoding: $0.bytes, as: UTF8.self) }, ["zero", "two", "three"])
        XCTAssertEqual(taken.map(\.boundary), [true, true, true], "the first, the one after the skip, the discontinuity")
        XCTAssertEqual(taken.map(\.cues.count), [0, 1, 1], "the skipped segment's CUE-OUT goes with the next; the CUE-IN with its own")
        XCTAssertEqual(server.requests.map(\.target), ["/live/index.m3u8", "/live/s0.ts", "/live/s1.ts", "/live/s2.ts", "/live/s3.ts"])
        // An ended playlist: nothing more, and the reader is told why.
        let deadline = ContinuousClock.now + .seconds(5)
        while queue.problem == nil, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertTrue(queue.problem?.message.contains("#EXT-X-ENDLIST") ?? false, "\(String(describing: queue.problem))")
    }
}
