import Foundation
@testable import LivePush
import LivePushWire
import XCTest

/// The HLS output's stream without I/O: packets in, the writes out (segments, playlists,
/// removals), in the order a reader needs them.
final class HLSStreamTests: XCTestCase {
    private typealias Parts = WireTSMuxerPartsTests
    private let keyframe = Parts.avcc([[0x65] + [UInt8](repeating: 0xAB, count: 500)])
    private let picture = Parts.avcc([[0x41] + [UInt8](repeating: 0xCD, count: 100)])
    private let wall: Int64 = 1_795_779_035_000_000

    private var info: StreamInfo {
        StreamInfo(video: VideoTrackInfo(width: 320, height: 240, frameRate: 25, bitrate: 500_000, decoderConfiguration: Parts.avcC),
                   audio: AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 128_000, audioSpecificConfig: [0x11, 0x90]),
                   duration: 0)
    }

    private func stream(_ query: String = "hls_time=2&hls_list_size=0", forms: HLSCueTags.Forms = .all) throws -> HLSStream {
        HLSStream(playlistName: "index.m3u8", options: try HLSOptions(query: query, keepsOthers: false), forms: forms,
                  muxer: try TSMuxer.make(for: info, output: "an HLS output"), info: info, wallStart: wall)
    }

    /// `seconds` of 25 fps pictures (a keyframe every second, and at `keyframesAt`) with sound;
    /// `cues` go in before the picture of their index. Returns every write, in order.
    private func feed(_ stream: inout HLSStream, seconds: Int, keyframesAt extra: Set<Int> = [],
                      cues: [Int: AdCue] = [:]) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        for index in 0..<(seconds * 25) {
            let time = Int64(index) * 40_000
            if let cue = cues[index] { writes += stream.take(.spliceSection(cue.section.encoded(), at: cue.sendAt)) }
            let key = index % 25 == 0 || extra.contains(index)
            writes += stream.take(MediaPacket(kind: .video, data: key ? keyframe : picture, dts: time, pts: time, duration: 40_000,
                                              importance: key ? .key : .reference))
            writes += stream.take(MediaPacket(kind: .audio, data: [UInt8](repeating: 0x21, count: 200), dts: time + 1_000,
                                              pts: time + 1_000, duration: 21_333, importance: .key))
        }
        return writes
    }

    private func playlists(_ writes: [HLSWrite]) -> [String] {
        writes.compactMap { (write: HLSWrite) -> String? in
            guard case .put("index.m3u8", let bytes) = write else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    func testEachSegmentIsWrittenBeforeThePlaylistThatListsIt() throws {
        var stream = try self.stream()
        var writes = feed(&stream, seconds: 5)
        writes += stream.finish()
        XCTAssertEqual(writes.map(\.name), ["index0.ts", "index.m3u8", "index1.ts", "index.m3u8", "index2.ts", "index.m3u8"])
        let last = try XCTUnwrap(playlists(writes).last)
        XCTAssertTrue(last.hasPrefix("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"), last)
        XCTAssertEqual(last.components(separatedBy: "#EXTINF:").dropFirst().map { $0.prefix { $0 != "," } }, ["2.000", "2.000", "1.000"])
        XCTAssertTrue(last.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:39.000Z\n#EXTINF:1.000,\nindex2.ts\n#EXT-X-ENDLIST\n"), last)
        // Every segment is whole TS packets and opens with the PAT, then the PMT.
        for case .put(let name, let bytes) in writes where name.hasSuffix(".ts") {
            let packets = try TSTestPacket.all(bytes)
            XCTAssertEqual(packets.prefix(2).map(\.pid), [0x0000, 0x1000], name)
        }
        XCTAssertEqual(stream.figures.segments, 3)
    }

    func testASlidingWindowRemovesTheSegmentsThatLeftItButTheLatest() throws {
        var stream = try self.stream("hls_time=1&hls_list_size=3")
        let writes = feed(&stream, seconds: 7)
        let deleted = writes.compactMap { (write: HLSWrite) -> String? in
            guard case .delete(let name) = write else { return nil }
            return name
        }
        // Six segments completed (0-5); the playlist lists 3-5, index2 stays one more round.
        XCTAssertEqual(deleted, ["index0.ts", "index1.ts"])
        let last = try XCTUnwrap(playlists(writes).last)
        XCTAssertTrue(last.contains("#EXT-X-MEDIA-SEQUENCE:3\n"), last)
        XCTAssertEqual(last.components(separatedBy: "\n").filter { $0.hasSuffix(".ts") }, ["index3.ts", "index4.ts", "index5.ts"])
        // A removal follows the playlist that no longer lists the segment.
        let firstDelete = try XCTUnwrap(writes.firstIndex(of: .delete(name: "index0.ts")))
        let listing = playlists(Array(writes[..<firstDelete])).last ?? ""
        XCTAssertFalse(listing.contains("index0.ts"))
    }

    func testASpliceWithoutAKeyframeMovesToTheNextOneAndItsSectionSaysSo() throws {
        var stream = try self.stream("hls_time=4&hls_list_size=0", forms: .oatcls)
        // Keyframes every second; the break at 1.4 s has none: it moves to 2 s.
        let out = AdCue(eventID: 8, outOfNetwork: true, spliceTime: 1_400_000, duration: 3_000_000, sendAt: 1_000_000)
        var writes = feed(&stream, seconds: 3, cues: [25: out])
        writes += stream.finish()
        XCTAssertEqual(stream.figures.splicesMoved, 1)
        let lines = try XCTUnwrap(playlists(writes).last).components(separatedBy: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("#EXTINF:") }, ["#EXTINF:2.000,", "#EXTINF:1.000,"])
        let tag = try XCTUnwrap(lines.first { $0.hasPrefix("#EXT-OATCLS-SCTE35:") })
        XCTAssertEqual(lines[try XCTUnwrap(lines.firstIndex(of: tag)) + 3], "index1.ts")
        let section = try SpliceInfoSection(parsing: [UInt8](try XCTUnwrap(Data(base64Encoded: String(tag.dropFirst(19))))))
        guard case .insert(let insert) = section.command else { return XCTFail("\(section.command)") }
        XCTAssertEqual(insert.spliceTime, 2 * 90_000, "moved to the keyframe")
        XCTAssertEqual(insert.breakDuration, 3 * 90_000)
        XCTAssertEqual(section.ptsAdjustment, TSClock.ticks90kHz(0))
    }

    func testABreakCutsTheSegmentsAtItsSplicesAndTagsThem() throws {
        var stream = try self.stream("hls_time=1&hls_list_size=0")
        let out = AdCue(eventID: 5, outOfNetwork: true, spliceTime: 1_400_000, duration: 2_600_000, sendAt: 1_400_000)
        let back = AdCue(eventID: 5, outOfNetwork: false, spliceTime: 4_000_000, duration: nil, sendAt: 4_000_000)
        var writes = feed(&stream, seconds: 6, keyframesAt: [35], cues: [35: out, 100: back])
        writes += stream.finish()
        let text = try XCTUnwrap(playlists(writes).last)
        let lines = text.components(separatedBy: "\n")
        // 0-1, 1-1.4 (cut at the splice), 1.4-3 (the break), 3-4 (the break, cut at the return), 4-5, 5-6.
        XCTAssertEqual(lines.filter { $0.hasPrefix("#EXTINF:") },
                       ["#EXTINF:1.000,", "#EXTINF:0.400,", "#EXTINF:1.600,", "#EXTINF:1.000,", "#EXTINF:1.000,", "#EXTINF:1.000,"])
        let out1 = try XCTUnwrap(lines.firstIndex(of: "#EXT-X-CUE-OUT:DURATION=2.600"), text)
        XCTAssertTrue(lines[out1 + 1].hasPrefix("#EXT-OATCLS-SCTE35:"))
        XCTAssertTrue(lines[out1 + 2].hasPrefix("#EXT-X-DATERANGE:ID=\"splice-5\",START-DATE=\"2026-11-27T11:30:36.400Z\",PLANNED-DURATION=2.600,SCTE35-OUT=0xFC"),
                      lines[out1 + 2])
        XCTAssertEqual(lines[out1 + 3], "#EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:36.400Z")
        XCTAssertEqual(lines[out1 + 5], "index2.ts")
        let cont = try XCTUnwrap(lines.firstIndex(of: "#EXT-X-CUE-OUT-CONT:ElapsedTime=1.600,Duration=2.600"), text)
        XCTAssertEqual(lines[cont + 3], "index3.ts")
        let cueIn = try XCTUnwrap(lines.firstIndex(of: "#EXT-X-CUE-IN"), text)
        XCTAssertEqual(lines[cueIn + 5], "index4.ts")
        XCTAssertTrue(lines[cueIn + 2].contains("END-DATE=\"2026-11-27T11:30:39.000Z\",DURATION=2.600,SCTE35-IN=0xFC"), lines[cueIn + 2])
        XCTAssertEqual(lines.filter { $0.hasPrefix("#EXT-X-CUE") }.count, 3, "out, one continuation, in")
    }
}
