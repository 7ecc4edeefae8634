@testable import LivePush
import LivePushWire
import XCTest

/// E-RTMP v2: the connect command's capabilities, the server's answer read bounded, the plan an
/// RTMP connection follows from it (warnings, multitrack or track 0), and the multitrack tags.
final class EnhancedRTMPv2Tests: XCTestCase {
    private let amf0 = RTMPMessageType.commandAMF0.rawValue

    func testTheConnectCommandCarriesCapsExFourCcListAndTheInfoMap() throws {
        let command = RTMPConnectCommand(app: "live", tcUrl: "rtmp://h/live", fourCcList: ["hvc1"],
                                         videoFourCcInfoMap: RTMPSession.videoFourCcInfoMap, capsEx: RTMPSession.capsEx)
        let values = try AMF0.decode(command.body)
        XCTAssertEqual(values.first, .string("connect"))
        let object = values[2]
        XCTAssertEqual(object["fourCcList"], .strictArray([.string("hvc1")]))
        XCTAssertEqual(object["capsEx"], .number(3), "Reconnect | Multitrack, no ModEx or nano offsets")
        let map = try XCTUnwrap(object["videoFourCcInfoMap"]?.properties)
        XCTAssertEqual(map.map(\.key), ["avc1", "hvc1", "av01", "vp09"])
        XCTAssertEqual(object["videoFourCcInfoMap"]?["hvc1"], .number(6), "CanEncode | CanForward")
        XCTAssertEqual(object["videoFourCcInfoMap"]?["vp09"], .number(4), "forwarded only")
        let legacy = RTMPConnectCommand(app: "live", tcUrl: "rtmp://h/live", fourCcList: [])
        XCTAssertNil(try AMF0.decode(legacy.body)[2]["fourCcList"])
        XCTAssertNil(try AMF0.decode(legacy.body)[2]["capsEx"])
    }

    /// A v2 server's `_result`: every field read, typed.
    func testTheServersAnswerIsRead() throws {
        let body = AMF0.encode([.string("_result"), .number(1), .object([
            AMF0Property("fmsVer", .string("FMS/3,0,1,123")),
            AMF0Property("fourCcList", .strictArray([.string("hvc1"), .string("av01")])),
            AMF0Property("videoFourCcInfoMap", .object([AMF0Property("avc1", .number(7)), AMF0Property("vp09", .number(0))])),
            AMF0Property("audioFourCcInfoMap", .object([AMF0Property("Opus", .number(1))])),
            AMF0Property("capsEx", .number(3)),
        ]), .object([AMF0Property("level", .string("status")), AMF0Property("code", .string("NetConnection.Connect.Success"))])])
        let reply = try XCTUnwrap(CommandReply(typeID: amf0, body: body))
        let answer = try XCTUnwrap(reply.capabilities)
        XCTAssertEqual(answer.fourCcList, ["hvc1", "av01"])
        XCTAssertEqual(answer.videoFourCcInfoMap, ["avc1": 7, "vp09": 0])
        XCTAssertEqual(answer.audioFourCcInfoMap, ["Opus": 1])
        XCTAssertEqual(answer.capsEx, 3)
        XCTAssertTrue(answer.confirmsVideo("hvc1"))
        XCTAssertFalse(answer.confirmsVideo("vp09"), "a zero mask confirms nothing")
        let capabilities = ServerCapabilities(answer)
        XCTAssertEqual(capabilities.videoFourCCs, ["av01", "avc1", "hvc1"])
        XCTAssertEqual(capabilities.audioFourCCs, ["Opus"])
        XCTAssertTrue(capabilities.acceptsMultitrack)
        XCTAssertTrue(capabilities.acceptsReconnectRequest)
        // nginx-rtmp 1.2 and FFmpeg's listener: nothing said.
        let legacy = AMF0.encode([.string("_result"), .number(1), .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123"))]),
                                  .object([AMF0Property("code", .string("NetConnection.Connect.Success"))])])
        XCTAssertNil(try XCTUnwrap(CommandReply(typeID: amf0, body: legacy)).capabilities)
        XCTAssertEqual(ServerCapabilities(nil).videoFourCCs, [])
    }

    /// A hostile answer: lists and maps cut to 32 entries, FourCCs that are not four printable
    /// characters and masks that are not whole numbers left out.
    func testAHostileAnswerIsBounded() throws {
        let many = (0..<10_000).map { AMF0Value.string(String(format: "c%03d", $0 % 1000)) }
        let junk: [AMF0Value] = [.string("\u{1B}[2J"), .string(String(repeating: "x", count: 100_000)), .number(1), .string("hvc1")]
        let map = (0..<1000).map { AMF0Property(String(format: "m%03d", $0), .number(1)) }
            + [AMF0Property("hvc1", .number(.nan)), AMF0Property("av01", .number(-1)), AMF0Property("\u{1B}[2J", .number(1))]
        let body = AMF0.encode([.string("_result"), .number(1), .object([
            AMF0Property("fourCcList", .strictArray(junk + many)),
            AMF0Property("videoFourCcInfoMap", .object(map)),
            AMF0Property("capsEx", .number(1e300)),
        ])])
        let answer = try XCTUnwrap(CommandReply(typeID: amf0, body: body)?.capabilities)
        XCTAssertEqual(answer.fourCcList?.count, EnhancedRTMPCapabilities.maxEntries)
        XCTAssertEqual(answer.fourCcList?.first, "hvc1", "the escape, the long string and the number are left out")
        XCTAssertEqual(answer.videoFourCcInfoMap?.count, EnhancedRTMPCapabilities.maxEntries)
        XCTAssertNil(answer.videoFourCcInfoMap?["hvc1"])
        XCTAssertNil(answer.capsEx, "not a 32-bit mask")
    }

    // MARK: - The plan

    private func video(_ codec: VideoCodec, _ width: Int, _ height: Int) -> VideoTrackInfo {
        VideoTrackInfo(codec: codec, width: width, height: height, frameRate: 25, bitrate: 0, decoderConfiguration: [1, 2, 3])
    }

    func testAnUnconfirmedCodecIsSentWithAWarning() {
        let info = StreamInfo(video: video(.hevc, 1280, 720), audio: nil, duration: 0)
        let silent = RTMPTrackPlan.make(info: info, answer: nil)
        XCTAssertEqual(silent.tracks, [0])
        XCTAssertEqual(silent.warnings.map(\.code), [.codecNotConfirmed])
        XCTAssertTrue(silent.warnings[0].message.contains("did not confirm hvc1"), silent.warnings[0].message)
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: .init(fourCcList: ["hvc1"])).warnings, [])
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: .init(videoFourCcInfoMap: ["*": 1])).warnings, [])
        let h264 = StreamInfo(video: video(.h264, 1280, 720), audio: nil, duration: 0)
        XCTAssertEqual(RTMPTrackPlan.make(info: h264, answer: nil).warnings, [], "legacy FLV needs no confirmation")
    }

    /// Opus audio (`--audio-codec opus`) is announced and, unconfirmed, warned of like a video codec.
    func testUnconfirmedOpusAudioIsSentWithAWarning() {
        var opus = AudioTrackInfo(sampleRate: 48000, channels: 2, bitrate: 64000, audioSpecificConfig: [])
        opus.codec = .opus
        let info = StreamInfo(video: video(.h264, 640, 360), audio: opus, duration: 0)
        XCTAssertEqual(RTMPTrackPlan.announced(info), ["Opus"])
        let silent = RTMPTrackPlan.make(info: info, answer: nil)
        XCTAssertEqual(silent.tracks, [0])
        XCTAssertEqual(silent.warnings.map(\.code), [.codecNotConfirmed])
        XCTAssertTrue(silent.warnings[0].message.contains("did not confirm Opus audio"), silent.warnings[0].message)
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: .init(audioFourCcInfoMap: ["Opus": 4])).warnings, [])
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: .init(fourCcList: ["Opus"])).warnings, [])
    }

    func testALadderGoesAsTracksOrTrackZeroWithAWarning() {
        var info = StreamInfo(video: video(.h264, 1280, 720), audio: nil, duration: 0)
        info.variants = [video(.h264, 1280, 720), video(.h264, 640, 360)]
        let multitrack = RTMPTrackPlan.make(info: info, answer: .init(capsEx: 2))
        XCTAssertEqual(multitrack.tracks, [0, 1])
        XCTAssertEqual(multitrack.warnings, [])
        let legacy = RTMPTrackPlan.make(info: info, answer: nil)
        XCTAssertEqual(legacy.tracks, [0])
        XCTAssertEqual(legacy.warnings.map(\.code), [.multitrackNotConfirmed])
        XCTAssertTrue(legacy.warnings[0].message.contains("only 1280x720 (track 0)"), legacy.warnings[0].message)
        XCTAssertEqual(RTMPTrackPlan.announced(info), ["avc1"], "H.264 tracks go as avc1")
    }

    func testAlternativesTakeTheFirstConfirmedCodec() {
        var info = StreamInfo(video: video(.hevc, 1280, 720), audio: nil, duration: 0)
        info.variants = [video(.hevc, 1280, 720), video(.h264, 1280, 720)]
        info.codecPreference = [.hevc, .h264]
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: nil), RTMPTrackPlan(tracks: [1], warnings: []))
        XCTAssertEqual(RTMPTrackPlan.make(info: info, answer: .init(fourCcList: ["hvc1"])).tracks, [0])
        XCTAssertEqual(RTMPTrackPlan.announced(info), ["hvc1"])
    }

    // MARK: - Multitrack tags

    func testEachTrackHasItsOwnSequenceStartAndTaggedFrames() throws {
        var info = StreamInfo(video: video(.h264, 1280, 720), audio: nil, duration: 0)
        info.variants = [video(.h264, 1280, 720), video(.hevc, 640, 360)]
        var packetizer = FLVPacketizer(info: info, tracks: [0, 1])
        let header = packetizer.header()
        XCTAssertEqual(header.count, 3, "metadata, track 0's AVC sequence header, track 1's SequenceStart")
        XCTAssertEqual(Array(header[1].payload.prefix(2)), [0x17, 0x00])
        XCTAssertEqual(header[2].payload, [0x96, 0x00] + Array("hvc1".utf8) + [1, 1, 2, 3])
        let metadata = try AMF0.decode(header[0].payload)
        let trackInfo = metadata.last?["videoTrackIdInfoMap"]?["1"]
        XCTAssertEqual(trackInfo?["width"], .number(640), "onMetaData names track 1: \(metadata)")
        XCTAssertEqual(trackInfo?["videocodecid"], .number(Double(FLVExVideoCodec.hevc.rawValue)))
        let parsed = try XCTUnwrap(FLVMultitrackVideo.Header(header[2].payload))
        XCTAssertEqual(parsed.trackID, 1)
        XCTAssertEqual(parsed.fourCC, "hvc1")
        XCTAssertEqual(parsed.packetType, 0)

        var frame = MediaPacket(kind: .video, data: [9, 9], dts: 40_000, pts: 80_000, duration: 40_000, importance: .key)
        frame.variant = 1
        let message = packetizer.message(for: frame)
        XCTAssertEqual(message.header.bytes, [0x96, 0x01] + Array("hvc1".utf8) + [1, 0, 0, 40], "CodedFrames with its 40 ms")
        XCTAssertEqual(message.timestampMs, 40)
        frame.variant = 0
        XCTAssertEqual(packetizer.message(for: frame).header.bytes, [0x17, 0x01, 0, 0, 40], "track 0: legacy AVC")

        let avc = FLVMultitrackVideo.framePrefix(fourCC: FLVMultitrackVideo.avc1, trackID: 2, keyframe: false, compositionTimeMs: 0)
        XCTAssertEqual(avc.bytes, [0xA6, 0x01] + Array("avc1".utf8) + [2, 0, 0, 0], "avc1 always carries its composition time")

        let trackZeroOnly = FLVPacketizer(info: info, tracks: [0])
        XCTAssertEqual(trackZeroOnly.header().count, 2)
        frame.variant = 1
        XCTAssertFalse(trackZeroOnly.carries(frame))
        XCTAssertTrue(packetizer.carries(frame))
    }
}
