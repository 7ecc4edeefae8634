@testable import LivePush
import XCTest

/// The master playlist of an output with a ladder, as text; and two variants of one stream cut
/// at the same times.
final class HLSMasterPlaylistTests: XCTestCase {
    func testTheTextListsEachVariantWithItsAttributes() {
        var playlist = HLSMasterPlaylist()
        playlist.variants = [
            .init(uri: "index_v0.m3u8", peakBitsPerSecond: 2_900_000, averageBitsPerSecond: 2_650_000, width: 1280, height: 720,
                  frameRate: 25, codecs: ["avc1.64001f", "mp4a.40.2"]),
            .init(uri: "index_v1.m3u8", peakBitsPerSecond: 950_000, averageBitsPerSecond: 900_000, width: 640, height: 360,
                  frameRate: 29.97, codecs: ["avc1.42c01e", "mp4a.40.2"]),
        ]
        XCTAssertEqual(playlist.text, """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-STREAM-INF:BANDWIDTH=2900000,AVERAGE-BANDWIDTH=2650000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=25.000
        index_v0.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=950000,AVERAGE-BANDWIDTH=900000,CODECS="avc1.42c01e,mp4a.40.2",RESOLUTION=640x360,FRAME-RATE=29.970
        index_v1.m3u8

        """)
    }

    func testCodecsComeFromTheConfigurationRecords() {
        let video = VideoTrackInfo(width: 1280, height: 720, frameRate: 25, bitrate: 0, decoderConfiguration: [0x01, 0x64, 0x00, 0x1F, 0xFF])
        let audio = AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 128_000, audioSpecificConfig: [0x11, 0x90])
        XCTAssertEqual(HLSMasterPlaylist.codecs(video: video, audio: audio), ["avc1.64001f", "mp4a.40.2"])
        XCTAssertEqual(HLSMasterPlaylist.codecs(video: nil, audio: audio), ["mp4a.40.2"])
    }

    func testSegmentBitRatesMakeTheBandwidths() {
        var figures = HLSFigures()
        figures.count(segmentBytes: 250_000, duration: 2_000_000, target: 2_000_000)  // 1 Mbit/s
        figures.count(segmentBytes: 300_000, duration: 2_000_000, target: 2_000_000)  // 1.2 Mbit/s
        figures.count(segmentBytes: 50_000, duration: 200_000, target: 2_000_000)     // short: 2 Mbit/s, not the peak
        XCTAssertEqual(figures.highestBitsPerSecond, 1_200_000)
        XCTAssertEqual(figures.averageBitsPerSecond, 600_000 * 8 * 1_000_000 / 4_200_000)
        XCTAssertEqual(figures.segments, 3)
    }

    /// Two variants of a ladder, the same keyframe times, the sound in both: the same segments,
    /// the master once each has one, pictures to their own variant only.
    func testTheVariantsAreCutAlikeAndTheMasterFollows() throws {
        typealias Parts = WireTSMuxerPartsTests
        let track = VideoTrackInfo(width: 320, height: 240, frameRate: 25, bitrate: 500_000, decoderConfiguration: Parts.avcC)
        var small = track
        small.width = 160
        small.height = 120
        var info = StreamInfo(video: track, audio: AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 128_000,
                                                                   audioSpecificConfig: [0x11, 0x90]), duration: 0)
        info.variants = [track, small]
        var set = try HLSVariantSet.make(playlistName: "index.m3u8", options: try HLSOptions(query: "hls_time=1&hls_list_size=0", keepsOthers: false),
                                         forms: .all, info: info, wallStart: 0)
        var writes: [HLSWrite] = []
        for index in 0..<100 {
            let time = Int64(index) * 40_000
            for variant: UInt8 in [0, 1] {
                var packet = MediaPacket(kind: .video, data: Parts.avcc([[index % 25 == 0 ? 0x65 : 0x41, 0x88]]), dts: time, pts: time,
                                         duration: 40_000, importance: index % 25 == 0 ? .key : .reference)
                packet.variant = variant
                writes += set.take(packet)
            }
            writes += set.take(MediaPacket(kind: .audio, data: [0x21, 0x22], dts: time, pts: time, importance: .key))
        }
        writes += set.finish()
        let names = writes.map(\.name)
        XCTAssertEqual(names.filter { $0.hasPrefix("index_v0_") }, ["index_v0_0.ts", "index_v0_1.ts", "index_v0_2.ts", "index_v0_3.ts"])
        XCTAssertEqual(names.filter { $0.hasPrefix("index_v1_") }, ["index_v1_0.ts", "index_v1_1.ts", "index_v1_2.ts", "index_v1_3.ts"])
        let firstMaster = try XCTUnwrap(names.firstIndex(of: "index.m3u8"))
        XCTAssertGreaterThan(firstMaster, try XCTUnwrap(names.firstIndex(of: "index_v1.m3u8")), "after both variants have a segment")
        guard case .put(_, let bytes) = try XCTUnwrap(writes.last { $0.name == "index.m3u8" }) else { return XCTFail() }
        let master = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(master.contains("RESOLUTION=320x240") && master.contains("RESOLUTION=160x120"), master)
        XCTAssertEqual(set.figures.segments, 4)
    }
}
