import Foundation
@testable import LivePush
import LivePushWire
import XCTest

/// `hls_segment_type=fmp4` without I/O: the init segment before the first segment that needs
/// it, `.m4s` segments cut where the MPEG-TS ones are, the playlist's `#EXT-X-MAP`, and a new
/// init segment after a discontinuity when the codec configuration changes.
final class HLSStreamCMAFTests: XCTestCase {
    private typealias Parts = WireTSMuxerPartsTests
    private let keyframe = Parts.avcc([[0x65] + [UInt8](repeating: 0xAB, count: 500)])
    private let picture = Parts.avcc([[0x41] + [UInt8](repeating: 0xCD, count: 100)])
    private let wall: Int64 = 1_795_779_035_000_000

    private var info: StreamInfo {
        StreamInfo(video: VideoTrackInfo(width: 320, height: 240, frameRate: 25, bitrate: 500_000, decoderConfiguration: Parts.avcC),
                   audio: AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 128_000, audioSpecificConfig: [0x11, 0x90]),
                   duration: 0)
    }

    private func stream(_ query: String) throws -> HLSStream {
        try HLSStream.make(playlistName: "index.m3u8", options: try HLSOptions(query: query, keepsOthers: false), forms: .all,
                           info: info, wallStart: wall)
    }

    /// 25 fps pictures from `first` (a keyframe every second, and at `keyframesAt`) with sound;
    /// `headers` go in before the picture of their index.
    private func feed(_ stream: inout HLSStream, from first: Int = 0, to end: Int, keyframesAt extra: Set<Int> = [],
                      headers: [Int: [UInt8]] = [:]) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        for index in first..<end {
            let time = Int64(index) * 40_000
            if let header = headers[index] { writes += stream.take(.sequenceHeader(.video, configuration: header, at: time)) }
            let key = index % 25 == 0 || extra.contains(index)
            writes += stream.take(MediaPacket(kind: .video, data: key ? keyframe : picture, dts: time, pts: time, duration: 40_000,
                                              importance: key ? .key : .reference))
            writes += stream.take(MediaPacket(kind: .audio, data: [UInt8](repeating: 0x21, count: 200), dts: time + 1_000,
                                              pts: time + 1_000, importance: .key))
        }
        return writes
    }

    private func lastPlaylist(_ writes: [HLSWrite]) throws -> String {
        let bytes = try XCTUnwrap(writes.compactMap { (write: HLSWrite) -> [UInt8]? in
            guard case .put("index.m3u8", let bytes) = write else { return nil }
            return bytes
        }.last)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func box(_ write: HLSWrite) -> String {
        guard case .put(_, let bytes) = write, bytes.count >= 8 else { return "" }
        return String(decoding: bytes[4..<8], as: UTF8.self)
    }

    func testTheInitSegmentGoesOnceBeforeTheFirstSegmentAndThePlaylistMapsIt() throws {
        var stream = try self.stream("hls_time=2&hls_list_size=0&hls_segment_type=fmp4")
        var writes = feed(&stream, to: 125)
        writes += stream.finish()
        XCTAssertEqual(writes.map(\.name), ["index_init.mp4", "index0.m4s", "index.m3u8", "index1.m4s", "index.m3u8",
                                            "index2.m4s", "index.m3u8"])
        XCTAssertEqual(box(writes[0]), "ftyp")
        for write in writes where write.name.hasSuffix(".m4s") { XCTAssertEqual(box(write), "moof", write.name) }
        XCTAssertEqual(try lastPlaylist(writes), """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-MAP:URI="index_init.mp4"
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:35.000Z
        #EXTINF:2.000,
        index0.m4s
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:37.000Z
        #EXTINF:2.000,
        index1.m4s
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:39.000Z
        #EXTINF:1.000,
        index2.m4s
        #EXT-X-ENDLIST

        """)
        XCTAssertEqual(stream.figures.segments, 3)
        XCTAssertNil(stream.takeFailure())
    }

    func testTheCutsAreTheMPEGTSOnes() throws {
        var ts = try self.stream("hls_time=1&hls_list_size=0")
        var cmaf = try self.stream("hls_time=1&hls_list_size=0&hls_segment_type=fmp4")
        // Keyframes every second and at 1.4 s and 3.2 s: the same cuts either way.
        let tsWrites = feed(&ts, to: 150, keyframesAt: [35, 80]) + ts.finish()
        let cmafWrites = feed(&cmaf, to: 150, keyframesAt: [35, 80]) + cmaf.finish()
        let lengths = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") } }
        XCTAssertEqual(lengths(try lastPlaylist(cmafWrites)), lengths(try lastPlaylist(tsWrites)))
        XCTAssertEqual(lengths(try lastPlaylist(cmafWrites)).count, 6)
    }

    func testANewConfigurationStartsADiscontinuityWithItsOwnInitSegment() throws {
        var stream = try self.stream("hls_time=2&hls_list_size=0&hls_segment_type=fmp4")
        var other = Parts.avcC
        other[3] = 0x1F  // another level: another configuration record
        // The same configuration again (a switch between inputs alike) changes nothing; another one
        // at 2.4 s (a keyframe) ends the segment there; the next one is 2 s or more, to the keyframe at 5 s.
        var writes = feed(&stream, to: 60, headers: [25: Parts.avcC])
        writes += feed(&stream, from: 60, to: 150, keyframesAt: [60], headers: [60: other])
        writes += stream.finish()
        XCTAssertEqual(writes.filter { $0.name.hasSuffix(".mp4") }.map(\.name), ["index_init.mp4", "index_init1.mp4"])
        let second = try XCTUnwrap(writes.firstIndex { $0.name == "index_init1.mp4" })
        XCTAssertEqual(writes[second + 1].name, "index2.m4s", "the new init segment goes just before its first segment")
        let text = try lastPlaylist(writes)
        XCTAssertTrue(text.contains("""
        #EXTINF:0.400,
        index1.m4s
        #EXT-X-DISCONTINUITY
        #EXT-X-MAP:URI="index_init1.mp4"
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:37.400Z
        #EXTINF:2.600,
        index2.m4s
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:40.000Z
        #EXTINF:1.000,
        index3.m4s
        """), text)
        XCTAssertEqual(text.components(separatedBy: "#EXT-X-MAP:").count, 3, "each map said once")
    }

    func testAnInitSegmentLeavesWithTheLastSegmentThatNeedsIt() throws {
        var stream = try self.stream("hls_time=1&hls_list_size=2&hls_segment_type=fmp4")
        var other = Parts.avcC
        other[3] = 0x1F
        var writes = feed(&stream, to: 50)
        writes += feed(&stream, from: 50, to: 175, headers: [50: other])
        let deleted = writes.compactMap { (write: HLSWrite) -> String? in
            guard case .delete(let name) = write else { return nil }
            return name
        }
        // Segments 0-5; the window is 4-5, segment 3 stays stored; 0 and 1 used the first map.
        XCTAssertEqual(deleted, ["index0.m4s", "index1.m4s", "index_init.mp4", "index2.m4s"])
        let text = try lastPlaylist(writes)
        XCTAssertTrue(text.contains("#EXT-X-MEDIA-SEQUENCE:4\n#EXT-X-DISCONTINUITY-SEQUENCE:1\n#EXT-X-MAP:URI=\"index_init1.mp4\"\n"), text)
    }
}
