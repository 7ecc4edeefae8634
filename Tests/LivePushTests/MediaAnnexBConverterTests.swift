@testable import LivePush
import XCTest

final class MediaAnnexBConverterTests: XCTestCase {
    // Hand-made NAL units: header byte (forbidden bit, nal_ref_idc, type) + payload.
    let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x02, 0x80]  // ref_idc 3, type 7, Baseline 3.0
    let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]                      // ref_idc 3, type 8
    let aud: [UInt8] = [0x09, 0xF0]                                  // type 9
    let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33]                // ref_idc 3, type 5
    let pSlice: [UInt8] = [0x41, 0x9A, 0x02]                         // ref_idc 2, type 1
    let bSlice: [UInt8] = [0x01, 0x9E, 0x04]                         // ref_idc 0, type 1
    let sei: [UInt8] = [0x06, 0x05, 0x01, 0x80]                      // ref_idc 0, type 6

    func annexB(_ units: [[UInt8]], fourByte: Bool = true) -> [UInt8] {
        units.flatMap { (fourByte ? [0, 0, 0, 1] : [0, 0, 1]) + $0 }
    }

    func avcc(_ units: [[UInt8]]) -> [UInt8] {
        units.flatMap { u -> [UInt8] in
            let n = UInt32(u.count)
            return [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + u
        }
    }

    func testSplitsThreeAndFourByteStartCodes() {
        let bytes: [UInt8] = [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 0, 1] + idr
        XCTAssertEqual(AnnexBConverter.nalUnits(in: bytes), [sps, pps, idr])
        XCTAssertTrue(AnnexBConverter.startsWithStartCode(bytes))
        XCTAssertTrue(AnnexBConverter.startsWithStartCode([0, 0, 1, 0x65]))
        XCTAssertFalse(AnnexBConverter.startsWithStartCode(avcc([idr])))
    }

    func testTrailingZerosAndLeadingGarbageAreNotPartOfUnits() {
        let bytes: [UInt8] = [0xAB, 0xCD] + [0, 0, 1] + pSlice + [0, 0, 0, 0, 0, 1] + bSlice + [0, 0]
        XCTAssertEqual(AnnexBConverter.nalUnits(in: bytes), [pSlice, bSlice])
        XCTAssertEqual(AnnexBConverter.nalUnits(in: []), [])
        XCTAssertEqual(AnnexBConverter.nalUnits(in: [0, 0, 1]), [])
        XCTAssertEqual(AnnexBConverter.nalUnits(in: [1, 2, 3, 4]), [])
    }

    func testEmulationPreventionBytesStayInsideUnit() {
        // 00 00 03 01 is an escaped sequence inside a NAL unit, not a start code.
        let unit: [UInt8] = [0x65, 0x00, 0x00, 0x03, 0x01, 0x7F]
        XCTAssertEqual(AnnexBConverter.nalUnits(in: annexB([unit, pSlice])), [unit, pSlice])
    }

    func testConvertsToLengthPrefixedAndDropsAUD() {
        let out = AnnexBConverter.avcc(fromAnnexB: annexB([aud, sps, pps, idr], fourByte: false))
        XCTAssertEqual(out, avcc([sps, pps, idr]))
        let dropped = AnnexBConverter.avcc(fromAnnexB: annexB([aud, sps, pps, sei, idr]), dropParameterSets: true)
        XCTAssertEqual(dropped, avcc([sei, idr]))
    }

    func testFrameSummaryReferenceAndIDR() {
        func summary(_ units: [[UInt8]]) -> AnnexBConverter.FrameSummary {
            annexB(units).withUnsafeBufferPointer { AnnexBConverter.avcc(fromAnnexB: $0).summary }
        }
        XCTAssertEqual(summary([aud, sps, pps, idr]), .init(isReference: true, hasIDR: true))
        XCTAssertEqual(summary([aud, pSlice]), .init(isReference: true, hasIDR: false))
        // SEI has ref_idc 0 and the only slice is non-reference: disposable.
        XCTAssertEqual(summary([aud, sei, bSlice]), .init(isReference: false, hasIDR: false))
    }

    func testAVCCSummaryAndLengthSizeRewrite() {
        let frame = avcc([sei, bSlice])
        XCTAssertEqual(frame.withUnsafeBufferPointer { AVCCFormat.summarize($0, lengthSize: 4) },
                       .init(isReference: false, hasIDR: false))
        XCTAssertEqual(avcc([pSlice]).withUnsafeBufferPointer { AVCCFormat.summarize($0, lengthSize: 4)?.isReference }, true)
        // Truncated length: malformed.
        XCTAssertNil(([0, 0, 0, 9, 0x41] as [UInt8]).withUnsafeBufferPointer { AVCCFormat.summarize($0, lengthSize: 4) })
        // 2-byte lengths become 4-byte lengths.
        let twoByte: [UInt8] = [0, UInt8(idr.count)] + idr + [0, UInt8(pSlice.count)] + pSlice
        XCTAssertEqual(twoByte.withUnsafeBufferPointer { AVCCFormat.toFourByteLengths($0, lengthSize: 2) }, avcc([idr, pSlice]))
    }

    func testDecoderConfigurationRecord() throws {
        let record = try XCTUnwrap(AnnexBConverter.decoderConfigurationRecord(fromAnnexB: annexB([aud, sps, pps, idr])))
        let expected: [UInt8] = [0x01, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0x00, UInt8(sps.count)] + sps
            + [0x01, 0x00, UInt8(pps.count)] + pps
        XCTAssertEqual(record, expected)
        let parsed = try XCTUnwrap(AVCCFormat.parseDecoderConfiguration(record))
        XCTAssertEqual(parsed.lengthSize, 4)
        XCTAssertEqual(parsed.sps, [sps])
        XCTAssertEqual(parsed.pps, [pps])
        // Duplicated parameter sets (repeated in-band) appear once.
        XCTAssertEqual(AnnexBConverter.decoderConfigurationRecord(fromAnnexB: annexB([sps, pps, sps, pps])), record)
        XCTAssertNil(AnnexBConverter.decoderConfigurationRecord(fromAnnexB: annexB([sps, idr])))
        XCTAssertNil(AnnexBConverter.decoderConfigurationRecord(fromAnnexB: annexB([pps])))
        XCTAssertNil(AVCCFormat.parseDecoderConfiguration([0x02, 0, 0, 0]))
        // A 2-byte-length record is rewritten to announce 4-byte lengths.
        var twoByte = record
        twoByte[4] = 0xFD
        XCTAssertEqual(AVCCFormat.parseDecoderConfiguration(twoByte)?.lengthSize, 2)
        XCTAssertEqual(AVCCFormat.withFourByteLengths(twoByte), record)
    }

    func testHighProfileRecordCarriesChromaAndBitDepth() throws {
        // High profile (100), level 1.3; RBSP: sps_id ue(0)=1, chroma_format_idc ue(1)=010,
        // bit_depth_luma ue(0)=1, bit_depth_chroma ue(0)=1 -> 1010 11xx.
        let highSPS: [UInt8] = [0x67, 100, 0x00, 0x0D, 0b1010_1100, 0x80]
        let record = try XCTUnwrap(AnnexBConverter.decoderConfigurationRecord(sps: [highSPS], pps: [pps]))
        XCTAssertEqual(Array(record.suffix(4)), [0xFD, 0xF8, 0xF8, 0x00])
        XCTAssertEqual(AVCCFormat.parseDecoderConfiguration(record)?.sps, [highSPS])
        // Baseline: no extension.
        let baseline = try XCTUnwrap(AnnexBConverter.decoderConfigurationRecord(sps: [sps], pps: [pps]))
        XCTAssertEqual(baseline.count, 6 + 2 + sps.count + 1 + 2 + pps.count)
    }

    func testADTSHeaderToAudioSpecificConfig() throws {
        // AAC LC, 44100 Hz (index 4), stereo, no CRC, frame length 0x171 = 369.
        let header: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x3F, 0xFC]
        let h = try XCTUnwrap(ADTSHeader(header))
        XCTAssertEqual(h.audioObjectType, 2)
        XCTAssertEqual(h.samplingFrequencyIndex, 4)
        XCTAssertEqual(h.sampleRate, 44100)
        XCTAssertEqual(h.channelConfiguration, 2)
        XCTAssertEqual(h.headerLength, 7)
        XCTAssertEqual(h.frameLength, 369)
        XCTAssertEqual(h.rawDataBlocks, 1)
        XCTAssertEqual(h.audioSpecificConfig, [0x12, 0x10])

        // AAC LC, 48000 Hz (index 3), mono, with CRC.
        let mono: [UInt8] = [0xFF, 0xF0, 0x4C, 0x40, 0x20, 0x1F, 0xFC, 0x00, 0x00]
        let m = try XCTUnwrap(ADTSHeader(mono))
        XCTAssertEqual(m.headerLength, 9)
        XCTAssertEqual(m.sampleRate, 48000)
        XCTAssertEqual(m.audioSpecificConfig, [0x11, 0x88])

        XCTAssertNil(ADTSHeader([0x12, 0x10, 0, 0, 0, 0, 0]))
        XCTAssertNil(ADTSHeader([0xFF, 0xF1, 0x50]))
        XCTAssertNil(ADTSHeader([0xFF, 0xF1, 0x7C, 0x80, 0x2E, 0x3F, 0xFC]))  // frequency index 15
    }
}
