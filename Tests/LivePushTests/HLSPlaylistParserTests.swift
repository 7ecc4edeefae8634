import XCTest
@testable import LivePush

/// The HLS input's playlist reader: what RFC 8216 and the cue tags' authors write, and what a
/// hostile origin might send instead (every bound, every refusal, escaped messages).
final class HLSPlaylistParserTests: XCTestCase {
    private func parse(_ text: String) throws -> HLSPlaylist {
        try HLSPlaylistParser.parse(Array(text.utf8))
    }

    private func failure(_ text: String, limits: HLSPlaylistParser.Limits = .init(),
                         file: StaticString = #filePath, line: UInt = #line) -> HLSPlaylistParser.Failure? {
        do throws(HLSPlaylistParser.Failure) {
            _ = try HLSPlaylistParser.parse(Array(text.utf8), limits: limits)
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testASlidingWindowWithEveryCueTagIsReadInOrder() throws {
        let playlist = try parse("""
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:1
        #EXT-X-MEDIA-SEQUENCE:5
        #EXTINF:1.000,
        seg5.ts
        #EXT-OATCLS-SCTE35:/DAlAAAAAAAAAP/wFAUAAAAHf+/+AJJ+8H4AG3dAAAAAAAAA3S1Gyw==
        #EXT-X-CUE-OUT:DURATION=5
        #EXTINF:1.000,
        seg6.ts
        #EXT-X-CUE-OUT-CONT:ElapsedTime=1,Duration=5
        #EXTINF:0.960,
        http://cdn.example/seg7.ts?token=a
        #EXT-X-DISCONTINUITY
        #EXT-X-DATERANGE:ID="ad1",START-DATE="2026-11-27T12:00:00Z",PLANNED-DURATION=30.5,SCTE35-OUT=0xFC3000
        #EXT-X-CUE-IN
        #EXTINF:1,
        seg8.ts
        """)
        XCTAssertEqual(playlist.targetDuration, 1)
        XCTAssertEqual(playlist.mediaSequence, 5)
        XCTAssertFalse(playlist.ended)
        XCTAssertEqual(playlist.segments.map(\.sequence), [5, 6, 7, 8])
        XCTAssertEqual(playlist.segments.map(\.uri), ["seg5.ts", "seg6.ts", "http://cdn.example/seg7.ts?token=a", "seg8.ts"])
        XCTAssertEqual(playlist.segments.map(\.duration), [1, 1, 0.96, 1])
        XCTAssertEqual(playlist.segments.map(\.discontinuity), [false, false, false, true])
        XCTAssertEqual(playlist.segments[1].cues, [.oatcls(base64: "/DAlAAAAAAAAAP/wFAUAAAAHf+/+AJJ+8H4AG3dAAAAAAAAA3S1Gyw=="),
                                                   .cueOut(duration: 5)])
        XCTAssertEqual(playlist.segments[2].cues, [], "CUE-OUT-CONT says nothing new")
        XCTAssertEqual(playlist.segments[3].cues, [.dateRange(id: "ad1", attribute: .out, hex: "0xFC3000", duration: 30.5), .cueIn])
        XCTAssertEqual(playlist.nextSequence, 9)
    }

    func testCueOutFormsAndVODAndCRLF() throws {
        let playlist = try parse("#EXTM3U\r\n#EXT-X-TARGETDURATION:6\r\n#EXT-X-PLAYLIST-TYPE:VOD\r\n#EXT-X-CUE-OUT\r\n#EXTINF:6,\r\na.ts\r\n"
                                 + "#EXT-X-CUE-OUT:12.5\r\n#EXTINF:6,\r\nb.ts\r\n#EXT-X-ENDLIST\r\n")
        XCTAssertEqual(playlist.playlistType, .vod)
        XCTAssertTrue(playlist.ended)
        XCTAssertEqual(playlist.segments.map(\.cues), [[.cueOut(duration: nil)], [.cueOut(duration: 12.5)]])
        XCTAssertEqual(playlist.targetMicros, 6_000_000)
    }

    func testAMasterPlaylistListsItsVariants() throws {
        let playlist = try parse("""
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.42e01e,mp4a.40.2"
        low/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720
        high/index.m3u8
        """)
        XCTAssertTrue(playlist.isMaster)
        XCTAssertEqual(playlist.variants, [.init(uri: "low/index.m3u8", bandwidth: 800_000), .init(uri: "high/index.m3u8", bandwidth: 2_500_000)])
    }

    func testWhatTheInputCannotPlayIsRefused() {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
        XCTAssertEqual(failure("#EXT-X-TARGETDURATION:2\n")?.line, 1, "no #EXTM3U")
        XCTAssertNotNil(failure(head + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n#EXTINF:2,\na.ts\n"))
        XCTAssertNoThrow(try parse(head + "#EXT-X-KEY:METHOD=NONE\n#EXTINF:2,\na.ts\n"))
        XCTAssertNotNil(failure(head + "#EXT-X-MAP:URI=\"init.mp4\"\n"))
        XCTAssertNotNil(failure(head + "#EXT-X-BYTERANGE:100@0\n"))
        XCTAssertNotNil(failure("#EXTM3U\n#EXTINF:2,\na.ts\n"), "no target duration")
        XCTAssertNotNil(failure(head + "a.ts\n"), "a URI without #EXTINF")
    }

    func testHostileValuesAreBoundedAndShownEscaped() throws {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
        for bad in ["#EXTINF:-1,\na.ts", "#EXTINF:nan,\na.ts", "#EXTINF:1e9,\na.ts", "#EXTINF:3601,\na.ts",
                    "#EXT-X-MEDIA-SEQUENCE:-4", "#EXT-X-MEDIA-SEQUENCE:99999999999999999999999",
                    "#EXT-X-TARGETDURATION:0x10", "#EXT-X-CUE-OUT:DURATION=inf", "#EXT-X-PLAYLIST-TYPE:LIVE",
                    "#EXT-X-DATERANGE:ID=\"open", "#EXT-X-DATERANGE:ID=\"a\",ID=\"b\",SCTE35-OUT=0x00",
                    "#EXT-X-DATERANGE:lower=1", "#EXT-OATCLS-SCTE35:"] {
            XCTAssertNotNil(failure(head + bad + "\n"), bad)
        }
        // A URI must be visible ASCII: it would go into a request line.
        let spaced = failure(head + "#EXTINF:2,\na b.ts\n")
        XCTAssertEqual(spaced?.line, 4)
        // Controls are refused and never echoed raw.
        let escape = failure(head + "#EXTINF:2,\nseg\u{1B}[2J.ts\n")
        XCTAssertNotNil(escape)
        XCTAssertFalse(escape?.description.contains("\u{1B}") ?? true)
        let invalidUTF8 = try? HLSPlaylistParser.parse(Array(head.utf8) + [0xFF, 0xFE, 0x0A])
        XCTAssertNil(invalidUTF8)
        // The bounds.
        var limits = HLSPlaylistParser.Limits()
        limits.maxSegments = 2
        XCTAssertNotNil(failure(head + String(repeating: "#EXTINF:2,\na.ts\n", count: 3), limits: limits))
        limits = .init()
        limits.maxLineBytes = 16
        XCTAssertNotNil(failure(head + "#EXTINF:2,\n" + String(repeating: "a", count: 17) + "\n", limits: limits))
        limits = .init()
        limits.maxLines = 4
        XCTAssertNotNil(failure(head + "\n\n\n", limits: limits))
        limits = .init()
        limits.maxBytes = 10
        XCTAssertNotNil(failure(head, limits: limits))
        let long = String(repeating: "A", count: 200)
        let message = failure(head + "#EXTINF:2,\n\(long) x\n")?.description ?? ""
        XCTAssertLessThan(message.count, 160, "the origin's text is cut")
    }

    func testAttributeListsAndHex() {
        XCTAssertEqual(try HLSAttributeList.parse(#"A=1,B="x,y",C=0xAB"#, limit: 8, line: 1), ["A": "1", "B": "x,y", "C": "0xAB"])
        XCTAssertThrowsError(try HLSAttributeList.parse("A=1,", limit: 8, line: 1))
        XCTAssertThrowsError(try HLSAttributeList.parse("A=1,B=2,C=3", limit: 2, line: 1))
        XCTAssertEqual(HLSAttributeList.hexBytes("0xFC30"), [0xFC, 0x30])
        XCTAssertEqual(HLSAttributeList.hexBytes("0xabc"), [0x0A, 0xBC])
        XCTAssertNil(HLSAttributeList.hexBytes("FC30"))
        XCTAssertNil(HLSAttributeList.hexBytes("0xZZ"))
        XCTAssertNil(HLSAttributeList.hexBytes("0x" + String(repeating: "00", count: 5000)))
        XCTAssertEqual(HLSAttributeList.decimal("5.005"), 5.005)
        for bad in ["", ".5", "1.2.3", "-1", "1e3", "nan", "inf", String(repeating: "1", count: 40)] {
            XCTAssertNil(HLSAttributeList.decimal(bad), bad)
        }
    }

    /// A deterministic fuzz: mutated copies of a real playlist never crash the parser, and what
    /// it accepts keeps its bounds (finite durations up to an hour, visible-ASCII URIs).
    func testMutatedPlaylistsKeepTheBounds() {
        let seed = Array("""
        #EXTM3U
        #EXT-X-TARGETDURATION:1
        #EXT-X-MEDIA-SEQUENCE:5
        #EXT-OATCLS-SCTE35:/DAlAAAAAAAAAP/wFAUAAAAHf+/+AJJ+8H4AG3dAAAAAAAAA3S1Gyw==
        #EXT-X-DATERANGE:ID="ad1",PLANNED-DURATION=30.5,SCTE35-OUT=0xFC3000
        #EXT-X-CUE-OUT:DURATION=5
        #EXTINF:1.000,
        seg6.ts
        #EXT-X-DISCONTINUITY
        #EXT-X-CUE-IN
        #EXTINF:0.5,
        seg7.ts
        """.utf8)
        var generator = SplitMix64(seed: 35)
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                default: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 12)], at: index)
                }
                if bytes.isEmpty { bytes = [0x23] }
            }
            guard let playlist = try? HLSPlaylistParser.parse(bytes) else { continue }
            for segment in playlist.segments {
                XCTAssertTrue(segment.duration.isFinite && (0...3600).contains(segment.duration))
                XCTAssertTrue(segment.uri.utf8.allSatisfy { (0x21...0x7E).contains($0) })
            }
            XCTAssertTrue((0...3600).contains(playlist.targetDuration))
        }
    }
}

/// A seeded generator: the same mutations on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
