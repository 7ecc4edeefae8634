@testable import LivePushWire
import XCTest

/// The pieces of the MPEG-TS muxer on their own: timestamps, PES headers, AVCC → Annex B with
/// parameter sets, the configuration records, ADTS.
final class WireTSMuxerPartsTests: XCTestCase {
    static let sps: [UInt8] = [0x67, 0x4D, 0x40, 0x1E]
    static let pps: [UInt8] = [0x68, 0xEE]
    /// avcC: Main profile, level 3.0, 4-byte lengths, one SPS, one PPS.
    static let avcC: [UInt8] = [0x01, 0x4D, 0x40, 0x1E, 0xFF, 0xE1, 0x00, 0x04] + sps + [0x01, 0x00, 0x02] + pps

    static let vps: [UInt8] = [0x40, 0x01, 0x0C]
    static let hevcSPS: [UInt8] = [0x42, 0x01, 0x01]
    static let hevcPPS: [UInt8] = [0x44, 0x01, 0xC0]
    /// hvcC: 21 bytes of profile fields, 4-byte lengths, arrays PPS, an SEI, VPS, SPS (out of
    /// order on purpose: the muxer writes VPS, SPS, PPS).
    static let hvcC: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 20) + [0x0F, 0x04]
        + [0xA2, 0x00, 0x01, 0x00, 0x03] + hevcPPS
        + [0x27, 0x00, 0x01, 0x00, 0x02, 0x4E, 0x01]
        + [0xA0, 0x00, 0x01, 0x00, 0x03] + vps
        + [0xA1, 0x00, 0x01, 0x00, 0x03] + hevcSPS

    /// Length-prefixed NAL units.
    static func avcc(_ units: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
        units.flatMap { unit in (0..<lengthSize).reversed().map { UInt8((unit.count >> (8 * $0)) & 0xFF) } + unit }
    }

    static func annexB(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { [0, 0, 0, 1] + $0 } }

    func testTimestampsAreShiftedBy1_4sIn90kHzAndMaskedTo33Bits() {
        XCTAssertEqual(TSClock.ticks90kHz(0), 126_000)
        XCTAssertEqual(TSClock.ticks90kHz(40_000), 129_600)
        XCTAssertEqual(TSClock.ticks90kHz(23_219), (23_219 + 1_400_000) * 9 / 100, "rounded down")
        XCTAssertEqual(TSClock.ticks90kHz(-1_400_000), 0)
        XCTAssertEqual(TSClock.ticks90kHz(-1_400_001), (1 << 33) - 1, "before the offset: floor, then wrap")
        XCTAssertEqual(TSClock.ticks90kHz(95_444_000_000), 8_590_086_000 - (1 << 33), "wraps at 2^33")
        let pcr = TSClock.pcr(TSClock.pcrTime(at: 1_000_001))
        XCTAssertEqual(pcr.base, 1_700_001 * 9 / 100)
        XCTAssertEqual(UInt64(pcr.extension), (1_700_001 * 27) % 300)
    }

    func testPESHeaderTimestamps() throws {
        // PTS alone: the bytes every ffmpeg-made TS starts with (PTS 1.4 s).
        let ptsOnly = PESHeader.bytes(streamID: 0xE0, pts: 126_000, dts: 126_000, payloadLength: nil)
        XCTAssertEqual(ptsOnly, [0, 0, 1, 0xE0, 0, 0, 0x84, 0x80, 5, 0x21, 0x00, 0x07, 0xD8, 0x61])
        let both = PESHeader.bytes(streamID: 0xE0, pts: (1 << 33) - 1, dts: 0x1_2345_6789, payloadLength: nil)
        XCTAssertEqual(both[7], 0xC0)
        XCTAssertEqual(both[8], 10)
        XCTAssertEqual(both[9] >> 4, 0x3, "'0011' before a PTS followed by a DTS")
        XCTAssertEqual(both[14] >> 4, 0x1)
        let read = try TSTestPES(both)
        XCTAssertEqual(read.pts, (1 << 33) - 1)
        XCTAssertEqual(read.dts, 0x1_2345_6789)
        let audio = PESHeader.bytes(streamID: 0xC0, pts: 5, dts: nil, payloadLength: 100)
        XCTAssertEqual(Int(audio[4]) << 8 | Int(audio[5]), 3 + 5 + 100, "PES_packet_length counts from after itself")
    }

    func testAVCCToAnnexBWithParameterSetsBeforeKeyframes() throws {
        let configuration = try VideoDecoderConfiguration(codec: .h264, record: Self.avcC)
        XCTAssertEqual(configuration.parameterSets, [Self.sps, Self.pps])
        let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00]
        let sei: [UInt8] = [0x06, 0x05, 0x01, 0x80]
        var out: [UInt8] = []
        AnnexBAccessUnit.append(Self.avcc([sei, idr]), configuration: configuration, keyframe: true, to: &out)
        XCTAssertEqual(out, Self.annexB([[0x09, 0xF0], Self.sps, Self.pps, sei, idr]))

        out = []
        let slice: [UInt8] = [0x41, 0x9A, 0x02]
        AnnexBAccessUnit.append(Self.avcc([[0x09, 0x10], slice]), configuration: configuration, keyframe: false, to: &out)
        XCTAssertEqual(out, Self.annexB([[0x09, 0xF0], slice]), "no parameter sets, the unit's own delimiter replaced")

        out = []
        let ownSPS: [UInt8] = [0x67, 0x64, 0x00, 0x1F]
        AnnexBAccessUnit.append(Self.avcc([ownSPS, Self.pps, idr]), configuration: configuration, keyframe: true, to: &out)
        XCTAssertEqual(out, Self.annexB([[0x09, 0xF0], ownSPS, Self.pps, idr]), "a keyframe with its own sets keeps them alone")

        out = []
        var twoByteLengths = Self.avcC
        twoByteLengths[4] = 0xFD
        let short = try VideoDecoderConfiguration(codec: .h264, record: twoByteLengths)
        AnnexBAccessUnit.append(Self.avcc([slice], lengthSize: 2) + [0x00, 0x09, 0x41], configuration: short,
                                keyframe: false, to: &out)
        XCTAssertEqual(out, Self.annexB([[0x09, 0xF0], slice]), "2-byte lengths; a unit running past the end is dropped")
    }

    func testHEVCRecordAndAccessUnits() throws {
        let configuration = try VideoDecoderConfiguration(codec: .hevc, record: Self.hvcC)
        XCTAssertEqual(configuration.nalLengthSize, 4)
        XCTAssertEqual(configuration.parameterSets, [Self.vps, Self.hevcSPS, Self.hevcPPS], "VPS, SPS, PPS; no SEI")
        let idr: [UInt8] = [0x26, 0x01, 0xAF, 0x1D]  // IDR_W_RADL
        var out: [UInt8] = []
        AnnexBAccessUnit.append(Self.avcc([idr]), configuration: configuration, keyframe: true, to: &out)
        XCTAssertEqual(out, Self.annexB([[0x46, 0x01, 0x50], Self.vps, Self.hevcSPS, Self.hevcPPS, idr]))
        out = []
        let trail: [UInt8] = [0x02, 0x01, 0xD0, 0x21]
        AnnexBAccessUnit.append(Self.avcc([[0x46, 0x01, 0x50], trail]), configuration: configuration, keyframe: false,
                                to: &out)
        XCTAssertEqual(out, Self.annexB([[0x46, 0x01, 0x50], trail]))
    }

    func testMalformedRecordsAreRefused() {
        for length in 1..<Self.hvcC.count {
            XCTAssertThrowsError(try VideoDecoderConfiguration(codec: .hevc, record: Array(Self.hvcC.prefix(length))),
                                 "hvcC cut at \(length)")
        }
        for length in 1..<Self.avcC.count {
            XCTAssertThrowsError(try VideoDecoderConfiguration(codec: .h264, record: Array(Self.avcC.prefix(length))),
                                 "avcC cut at \(length)")
        }
        XCTAssertThrowsError(try VideoDecoderConfiguration(codec: .h264, record: [0x00] + Self.avcC.dropFirst())) {
            XCTAssertEqual($0 as? TSConfigurationError, .unsupportedRecordVersion(0))
        }
        XCTAssertEqual(try VideoDecoderConfiguration(codec: .h264, record: []).parameterSets, [], "in-band sets")
    }

    func testAudioSpecificConfigAndADTS() throws {
        let lc = try AACConfiguration(audioSpecificConfig: [0x12, 0x10])
        XCTAssertEqual([lc.audioObjectType, lc.sampleRate, lc.channels], [2, 44_100, 2])
        XCTAssertEqual(lc, try AACConfiguration(sampleRate: 44_100, channels: 2))
        XCTAssertEqual(lc.adtsHeader(rawLength: 100), [0xFF, 0xF1, 0x50, 0x80, 0x0D, 0x7F, 0xFC])
        XCTAssertNil(lc.adtsHeader(rawLength: 8185), "13 bits of frame length")
        XCTAssertNotNil(lc.adtsHeader(rawLength: 8184))

        // HE-AAC: object type 5, core 24 kHz stereo, SBR at 48 kHz, core type 2: ADTS says the LC core.
        let he = try AACConfiguration(audioSpecificConfig: [0x2B, 0x11, 0x88, 0x00])
        XCTAssertEqual([he.audioObjectType, he.sampleRate, he.channels], [2, 24_000, 2])
        // Explicit frequency (index 15, 24 bits): 48000, mono.
        let explicit = try AACConfiguration(audioSpecificConfig: [0x17, 0x80, 0x5D, 0xC0, 0x08])
        XCTAssertEqual([explicit.sampleRate, explicit.channels], [48_000, 1])
        let surround = try AACConfiguration(sampleRate: 48_000, channels: 8)
        XCTAssertEqual(surround.adtsHeader(rawLength: 0)?[2...3], [0x4D, 0xC0], "7.1 is channel configuration 7")

        XCTAssertThrowsError(try AACConfiguration(audioSpecificConfig: [0x12]))
        XCTAssertThrowsError(try AACConfiguration(audioSpecificConfig: [0x12, 0x00]), "channel configuration 0 (a PCE)")
        XCTAssertThrowsError(try AACConfiguration(sampleRate: 44_000, channels: 2))
        XCTAssertThrowsError(try AACConfiguration(audioObjectType: 42, sampleRate: 48_000, channels: 2))
    }
}
