@testable import LivePush
import XCTest

/// What a push encodes after the clock for what its outputs need: a WHIP output gets H.264
/// Constrained Baseline and Opus, the other outputs keep the copy and the AAC.
final class GraphPlanTests: XCTestCase {
    private let rtmp = OutputNeeds(kind: .rtmp)
    private let whip = OutputNeeds(kind: .whip)

    /// An avcC with the given profile bytes (and one tiny SPS and PPS: the plan reads bytes 1 to 3 only).
    private func video(_ codec: VideoCodec = .h264, profile: UInt8, constraints: UInt8, width: Int = 1280, height: Int = 720) -> VideoTrackInfo {
        VideoTrackInfo(codec: codec, width: width, height: height, frameRate: 25, bitrate: 0,
                       decoderConfiguration: [1, profile, constraints, 31, 0xFF, 0xE1, 0, 4, 0x67, profile, constraints, 31, 1, 0, 2, 0x68, 0xCE])
    }

    private func plan(_ needs: [OutputNeeds], asked: [Int: VideoRendition] = [:], video: VideoTrackInfo?, hasAudio: Bool = true,
                      inputsMayChange: Bool = false) throws -> GraphPlan {
        try GraphPlan.make(needs: needs, asked: asked.mapValues { [$0] }, video: video, hasAudio: hasAudio, inputsMayChange: inputsMayChange,
                           defaultBitrateKbps: { $0.width * $0.height >= 1280 * 720 ? 1500 : 800 })
    }

    func testProfileLevelIDsAConstrainedBaselineDecoderTakes() {
        let taken: [(UInt8, UInt8)] = [(66, 0xE0), (66, 0xC0), (66, 0x40), (77, 0x80), (88, 0xC0)]
        let refused: [(UInt8, UInt8)] = [(66, 0x00), (66, 0x80), (77, 0x40), (100, 0x00), (100, 0xC0), (88, 0x80)]
        for (profile, constraints) in taken {
            XCTAssertTrue(H264ProfileLevel(profileIDC: profile, constraints: constraints, levelIDC: 31).isConstrainedBaseline, "\(profile) \(constraints)")
        }
        for (profile, constraints) in refused {
            XCTAssertFalse(H264ProfileLevel(profileIDC: profile, constraints: constraints, levelIDC: 31).isConstrainedBaseline, "\(profile) \(constraints)")
        }
        XCTAssertEqual(H264ProfileLevel(profileIDC: 66, constraints: 0xE0, levelIDC: 31).description, "42e01f")
        XCTAssertNil(H264ProfileLevel(avcC: [0x0A, 66, 0xE0, 31]), "not an avcC")
    }

    /// The done-when case: a High-profile file to nginx and to WHIP. nginx keeps the copy, the
    /// WHIP output gets a Constrained Baseline encode at the source's size, and Opus.
    func testAHighProfileSourceGivesTheWHIPOutputAConstrainedBaselineEncode() throws {
        let made = try plan([rtmp, whip], video: video(profile: 100, constraints: 0))
        XCTAssertEqual(made.renditions, [1: [VideoRendition(width: 1280, height: 720, bitrateKbps: 1500, constrainedBaseline: true)]])
        XCTAssertEqual(made.opusOutputs, [1])
        XCTAssertEqual(made.renditions[1]?.first?.description, "1280x720@1500 constrained baseline")
    }

    func testAConstrainedBaselineSourceIsCopiedToWHIP() throws {
        let made = try plan([whip, rtmp], video: video(profile: 66, constraints: 0xC0))
        XCTAssertEqual(made.renditions, [:])
        XCTAssertEqual(made.opusOutputs, [0])
    }

    /// A playout sequence or a pause image may put other H.264 on air: WebRTC cannot take a new
    /// profile or SPS once negotiated, so the WHIP output gets an encode whose configuration never changes.
    func testAnyOtherInputThatMayGoOnAirMeansAnEncode() throws {
        let made = try plan([whip], video: video(profile: 66, constraints: 0xC0, width: 640, height: 360), inputsMayChange: true)
        XCTAssertEqual(made.renditions, [0: [VideoRendition(width: 640, height: 360, bitrateKbps: 800, constrainedBaseline: true)]])
    }

    func testAnHEVCSourceIsEncodedForWHIPAndCopiedToRTMP() throws {
        let made = try plan([rtmp, whip], video: video(.hevc, profile: 1, constraints: 0))
        XCTAssertEqual(made.renditions.keys.sorted(), [1])
        XCTAssertEqual(made.renditions[1]?.first?.codec, .h264)
        XCTAssertEqual(made.renditions[1]?.first?.constrainedBaseline, true)
    }

    /// A rendition the app asked for a WHIP output is made Constrained Baseline; one it asked
    /// for an RTMP output stays as asked, and the two are told apart.
    func testAskedRenditionsAreKeptAndAWHIPOneIsMadeConstrainedBaseline() throws {
        let small = VideoRendition(width: 640, height: 360, bitrateKbps: 800)
        let made = try plan([rtmp, whip], asked: [0: small, 1: small], video: video(profile: 100, constraints: 0))
        XCTAssertEqual(made.renditions[0], [small])
        XCTAssertEqual(made.renditions[1], [VideoRendition(width: 640, height: 360, bitrateKbps: 800, constrainedBaseline: true)])
        XCTAssertNotEqual(made.renditions[0], made.renditions[1], "two encodes")
    }

    func testAskingAWHIPOutputForHEVCIsACodedError() {
        XCTAssertThrowsError(try plan([whip], asked: [0: VideoRendition(width: 640, height: 360, bitrateKbps: 800, codec: .hevc)],
                                      video: video(profile: 100, constraints: 0))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .outputSettingsInvalid)
            XCTAssertTrue("\(error)".contains("Constrained Baseline"), "\(error)")
        }
    }

    func testWithoutWHIPNothingIsAddedAndWithoutSoundNoOpus() throws {
        XCTAssertEqual(try plan([rtmp, rtmp], video: video(profile: 100, constraints: 0)), GraphPlan(renditions: [:], opusOutputs: []))
        XCTAssertEqual(try plan([whip], video: nil, hasAudio: false), GraphPlan(renditions: [:], opusOutputs: []))
        XCTAssertEqual(try plan([whip], video: nil, hasAudio: true).opusOutputs, [0])
    }

    /// A ladder goes only to an output that carries one (HLS, RTMP's multitrack, WHIP's
    /// simulcast); SRT refuses it, naming what can.
    func testALadderGoesOnlyToAnHLSRTMPOrWHIPOutput() throws {
        let ladder = [VideoRendition(width: 1280, height: 720, bitrateKbps: 2500), VideoRendition(width: 640, height: 360, bitrateKbps: 800)]
        let source = VideoTrackInfo(width: 1280, height: 720, frameRate: 25, bitrate: 0, decoderConfiguration: [])
        let made = try GraphPlan.make(needs: [OutputNeeds(kind: .rtmp), OutputNeeds(kind: .hls)], asked: [1: ladder], video: source,
                                      hasAudio: true, inputsMayChange: false, defaultBitrateKbps: { _ in 800 })
        XCTAssertEqual(made.renditions, [1: ladder])
        let rtmp = try GraphPlan.make(needs: [OutputNeeds(kind: .rtmp), OutputNeeds(kind: .rtmps)], asked: [0: ladder, 1: ladder],
                                      video: source, hasAudio: true, inputsMayChange: false, defaultBitrateKbps: { _ in 800 })
        XCTAssertEqual(rtmp.renditions, [0: ladder, 1: ladder], "E-RTMP v2 multitrack")
        for kind in [OutputKind.srt] {
            XCTAssertThrowsError(try GraphPlan.make(needs: [OutputNeeds(kind: kind)], asked: [0: ladder], video: source, hasAudio: true,
                                                    inputsMayChange: false, defaultBitrateKbps: { _ in 800 })) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .outputSettingsInvalid)
                XCTAssertTrue(error?.message.contains("output 0 has a ladder of 2 renditions") ?? false, "\(String(describing: error))")
                XCTAssertTrue(error?.message.contains("HLS output") ?? false, "\(String(describing: error))")
                XCTAssertTrue(error?.message.contains("an RTMP output (Enhanced RTMP v2 multitrack") ?? false, "\(String(describing: error))")
                XCTAssertTrue(error?.message.contains("a WHIP output (simulcast") ?? false, "\(String(describing: error))")
            }
        }
    }

    /// A WHIP ladder is simulcast: every layer a Constrained Baseline H.264 encode, in the order
    /// asked (the top first); HEVC in it, or more layers than a peer sends, is a coded error.
    func testAWHIPLadderIsSimulcastOfConstrainedBaselineEncodes() throws {
        let ladder = [VideoRendition(width: 1280, height: 720, bitrateKbps: 2500), VideoRendition(width: 640, height: 360, bitrateKbps: 800)]
        let made = try plan([rtmp, whip], asked: [1: ladder[0]], video: video(profile: 100, constraints: 0))
        XCTAssertEqual(made.renditions[1]?.count, 1)
        let simulcast = try GraphPlan.make(needs: [whip], asked: [0: ladder], video: video(profile: 66, constraints: 0xC0), hasAudio: true,
                                           inputsMayChange: false, defaultBitrateKbps: { _ in 800 })
        XCTAssertEqual(simulcast.renditions[0], ladder.map { var layer = $0; layer.constrainedBaseline = true; return layer })
        let hevc = [ladder[0], VideoRendition(width: 640, height: 360, bitrateKbps: 800, codec: .hevc)]
        let five = (0..<5).map { VideoRendition(width: 640 - 64 * $0, height: 360 - 36 * $0, bitrateKbps: 800) }
        for refused in [hevc, five] {
            XCTAssertThrowsError(try GraphPlan.make(needs: [whip], asked: [0: refused], video: video(profile: 66, constraints: 0xC0),
                                                    hasAudio: true, inputsMayChange: false, defaultBitrateKbps: { _ in 800 })) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .outputSettingsInvalid, "\(error)")
            }
        }
    }

    /// A preference list (`hevc,h264`) gives each RTMP output without renditions of its own the
    /// list's other codecs at the video's size, the push's video being one of them when its codec
    /// is listed; SRT, HLS and outputs that asked for a rendition keep what they had.
    func testAPreferenceListGivesRTMPOutputsTheOtherCodecsAsAlternatives() throws {
        let source = VideoTrackInfo(width: 640, height: 360, frameRate: 25, bitrate: 0, decoderConfiguration: [])
        let asked = [2: [VideoRendition(width: 320, height: 180, bitrateKbps: 300)]]
        let made = try GraphPlan.make(needs: [OutputNeeds(kind: .rtmp), OutputNeeds(kind: .srt), OutputNeeds(kind: .rtmps)], asked: asked,
                                      video: source, hasAudio: true, inputsMayChange: false, preference: [.hevc, .h264],
                                      defaultBitrateKbps: { _ in 800 })
        XCTAssertEqual(made.renditions[0], [VideoRendition(width: 640, height: 360, bitrateKbps: 800, codec: .hevc)])
        XCTAssertNil(made.renditions[1], "SRT takes the push's video")
        XCTAssertEqual(made.renditions[2], asked[2], "an asked rendition wins")
        XCTAssertEqual(made.alternatives, [0])
        XCTAssertEqual(made.withPushVideo, [0], "the H.264 source is the other alternative")
        let av1 = try GraphPlan.make(needs: [OutputNeeds(kind: .rtmp)], asked: [:], video: source, hasAudio: true, inputsMayChange: false,
                                     preference: [.av1, .hevc], defaultBitrateKbps: { _ in 800 })
        XCTAssertEqual(av1.renditions[0]?.map(\.codec), [.av1, .hevc])
        XCTAssertEqual(av1.withPushVideo, [], "H.264 is not in the list")
    }

    /// The encoder forces the profile: libx264 at the default preset writes High (100); asked for
    /// Constrained Baseline, its SPS says profile_idc 66 with constraint_set1.
    func testTheEncoderWritesAConstrainedBaselineSPS() throws {
        var settings = try VideoEncoderSettings(width: 320, height: 240, frameRate: 25, options: MediaSourceOptions())
        let high = try VideoFrameEncoder(settings: settings).trackInfo.decoderConfiguration
        settings.constrainedBaseline = true
        let baseline = try VideoFrameEncoder(settings: settings).trackInfo.decoderConfiguration
        let sps = try XCTUnwrap(AVCCFormat.parseDecoderConfiguration(baseline)?.sps.first)
        XCTAssertEqual(sps[0] & 0x1F, 7, "an SPS NAL unit")
        XCTAssertEqual(sps[1], 66, "profile_idc: Baseline")
        XCTAssertNotEqual(sps[2] & 0x40, 0, "constraint_set1: Constrained Baseline")
        XCTAssertEqual(H264ProfileLevel(avcC: baseline)?.isConstrainedBaseline, true, "\(H264ProfileLevel(avcC: baseline)!)")
        XCTAssertEqual(high[1], 100, "without it, libx264 at \(settings.preset) writes High")
        XCTAssertEqual(H264ProfileLevel(avcC: high)?.isConstrainedBaseline, false)
    }
}
