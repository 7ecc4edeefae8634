@testable import LivePushWire
import XCTest

/// The MPEG-TS muxer's output read back packet by packet: alignment, continuity counters,
/// PAT/PMT (CRC, stream types, the CUEI registration), PES timestamps, PCR, cues.
final class WireTSMuxerTests: XCTestCase {
    private typealias Parts = WireTSMuxerPartsTests
    private let keyframe = Parts.avcc([[0x65] + [UInt8](repeating: 0xAB, count: 1_000)])
    private let frame = Parts.avcc([[0x41] + [UInt8](repeating: 0xCD, count: 300)])
    private let aac = [UInt8](repeating: 0x21, count: 371)

    private func muxer(video: Bool = true, audio: Bool = true, scte35: Bool = true) throws -> TSMuxer {
        try TSMuxer(TSMuxer.Configuration(video: video ? .h264 : nil, videoConfiguration: video ? Parts.avcC : [],
                                          audio: audio ? try AACConfiguration(sampleRate: 48_000, channels: 2) : nil,
                                          scte35: scte35))
    }

    /// 1 s of 25 fps video (keyframe every 10 frames, B-frame style pts) and 48 kHz audio, interleaved.
    private func stream(_ muxer: inout TSMuxer, video: Bool = true, audio: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        var audioTime: Int64 = 0
        for i in 0..<25 {
            let dts = Int64(i) * 40_000
            if video {
                muxer.writeVideo(i % 10 == 0 ? keyframe : frame, dts: dts, pts: dts + (i % 2 == 0 ? 0 : 80_000),
                                 keyframe: i % 10 == 0, into: &out)
            }
            while audio, audioTime < dts + 40_000 {
                muxer.writeAudio(aac, pts: audioTime, into: &out)
                audioTime += 21_333
            }
            XCTAssertEqual(out.count % 188, 0)
        }
        return out
    }

    func testPacketsAreWholeAndCountersContinuePerPID() throws {
        var muxer = try self.muxer()
        var out = stream(&muxer)
        muxer.writeSection(SpliceInfoSection(command: .null).encoded(), into: &out)
        let packets = try TSTestPacket.all(out)
        XCTAssertEqual(Set(packets.map(\.pid)), [0x0000, 0x1000, 0x0100, 0x0101, 0x0102])
        var last: [UInt16: UInt8] = [:]
        for (index, packet) in packets.enumerated() {
            if let previous = last[packet.pid] {
                let expected = packet.hasPayload ? (previous + 1) & 0x0F : previous
                XCTAssertEqual(packet.continuityCounter, expected, "packet \(index) on PID \(packet.pid)")
            }
            last[packet.pid] = packet.continuityCounter
            XCTAssertTrue(packet.hasPayload || packet.pcr != nil, "adaptation-only packets are there for a PCR")
        }
    }

    func testProgramTablesHaveValidCRCsAndAnnounceTheCues() throws {
        var muxer = try self.muxer()
        let packets = try TSTestPacket.all(stream(&muxer))
        let pat = try TSTestPacket.section(XCTUnwrap(TSTestPacket.units(packets, pid: 0).first))
        XCTAssertEqual(SCTE35.crc32(pat), 0, "a section with its CRC-32/MPEG-2 sums to 0")
        XCTAssertEqual(pat[0], 0x00)
        XCTAssertEqual(Array(pat[8..<12]), [0x00, 0x01, 0xF0, 0x00], "program 1 on PID 0x1000")

        let pmt = try TSTestPacket.section(XCTUnwrap(TSTestPacket.units(packets, pid: 0x1000).first))
        XCTAssertEqual(SCTE35.crc32(pmt), 0)
        XCTAssertEqual(pmt[0], 0x02)
        XCTAssertEqual(UInt16(pmt[8] & 0x1F) << 8 | UInt16(pmt[9]), 0x100, "PCR on the video PID")
        let infoLength = Int(pmt[10] & 0x0F) << 8 | Int(pmt[11])
        XCTAssertEqual(Array(pmt[12..<(12 + infoLength)]), [0x05, 0x04, 0x43, 0x55, 0x45, 0x49], "registration: CUEI")
        XCTAssertEqual(streams(pmt), [[0x1B: 0x100], [0x0F: 0x101], [0x86: 0x102]])

        var plain = try self.muxer(video: false, scte35: false)
        let audioOnly = try TSTestPacket.all(stream(&plain, video: false))
        let plainPMT = try TSTestPacket.section(XCTUnwrap(TSTestPacket.units(audioOnly, pid: 0x1000).first))
        XCTAssertEqual(SCTE35.crc32(plainPMT), 0)
        XCTAssertEqual(UInt16(plainPMT[8] & 0x1F) << 8 | UInt16(plainPMT[9]), 0x101, "PCR on the audio PID")
        XCTAssertEqual(plainPMT[11], 0, "no program descriptors without cues")
        XCTAssertEqual(streams(plainPMT), [[0x0F: 0x101]])
    }

    /// The PMT's elementary streams as [stream_type: PID].
    private func streams(_ pmt: [UInt8]) -> [[UInt8: UInt16]] {
        var position = 12 + (Int(pmt[10] & 0x0F) << 8 | Int(pmt[11]))
        var out: [[UInt8: UInt16]] = []
        while position < pmt.count - 4 {
            out.append([pmt[position]: UInt16(pmt[position + 1] & 0x1F) << 8 | UInt16(pmt[position + 2])])
            position += 5 + (Int(pmt[position + 3] & 0x0F) << 8 | Int(pmt[position + 4]))
        }
        return out
    }

    func testTablesOpenTheStreamPrecedeKeyframesAndRepeat() throws {
        var muxer = try self.muxer()
        let packets = try TSTestPacket.all(stream(&muxer))
        XCTAssertEqual(packets.prefix(2).map(\.pid), [0, 0x1000])
        for (index, packet) in packets.enumerated() where packet.randomAccess {
            XCTAssertEqual(packets[index - 2].pid, 0, "PAT before the keyframe at \(index)")
            XCTAssertEqual(packets[index - 1].pid, 0x1000, "PMT before the keyframe at \(index)")
        }
        // Audio alone: tables every 100 ms of stream time at least (one per 5th frame of 21.3 ms).
        var audioOnly = try self.muxer(video: false)
        let audio = try TSTestPacket.all(stream(&audioOnly, video: false))
        var framesSinceTables = 0
        for packet in audio {
            if packet.pid == 0 { framesSinceTables = 0 }
            if packet.pid == 0x101, packet.unitStart { framesSinceTables += 1 }
            XCTAssertLessThanOrEqual(framesSinceTables, 5)
        }
        XCTAssertGreaterThanOrEqual(audio.filter { $0.pid == 0 }.count, 10)
    }

    func testPESTimestampsPCRAndRandomAccess() throws {
        var muxer = try self.muxer()
        let packets = try TSTestPacket.all(stream(&muxer))
        let video = try TSTestPacket.units(packets, pid: 0x100).map(TSTestPES.init)
        XCTAssertEqual(video.count, 25)
        for (i, pes) in video.enumerated() {
            let dts = Int64(i) * 40_000, pts = dts + (i % 2 == 0 ? 0 : 80_000)
            XCTAssertEqual(pes.streamID, 0xE0)
            XCTAssertEqual(pes.packetLength, 0, "unbounded video PES")
            XCTAssertEqual(pes.pts, UInt64((pts + 1_400_000) * 9 / 100))
            XCTAssertEqual(pes.dts, pts == dts ? nil : UInt64((dts + 1_400_000) * 9 / 100), "DTS only when it differs")
        }
        XCTAssertEqual(Array(video[0].payload.prefix(6)), [0, 0, 0, 1, 0x09, 0xF0], "access unit delimiter first")
        XCTAssertEqual(Array(video[0].payload[6..<14]), [0, 0, 0, 1] + Parts.sps, "then the SPS on a keyframe")

        let starts = packets.filter { $0.pid == 0x100 && $0.unitStart }
        XCTAssertEqual(starts.map(\.randomAccess), (0..<25).map { $0 % 10 == 0 })
        XCTAssertEqual(starts.map(\.pcr), (0..<25).map { UInt64((Int64($0) * 40_000 + 700_000) * 27) },
                       "a PCR with each access unit, 0.7 s behind its DTS")

        let audio = try TSTestPacket.units(packets, pid: 0x101).map(TSTestPES.init)
        XCTAssertEqual(audio.first?.streamID, 0xC0)
        XCTAssertEqual(audio.first?.packetLength, 3 + 5 + 7 + aac.count, "exact PES_packet_length")
        XCTAssertEqual(audio.first?.payload.count, 7 + aac.count)
        XCTAssertEqual(audio.first?.payload.prefix(2), [0xFF, 0xF1], "ADTS")
        XCTAssertEqual(audio.dropFirst().first?.pts, UInt64((21_333 + 1_400_000) * 9 / 100))
        XCTAssertTrue(packets.filter { $0.pid == 0x101 }.allSatisfy { $0.pcr == nil }, "no PCR on audio beside video")
    }

    func testThePCRKeepsPaceWithoutVideoFrames() throws {
        var muxer = try self.muxer()
        var out: [UInt8] = []
        for i in 0..<10 { muxer.writeAudio(aac, pts: Int64(i) * 21_333, into: &out) }
        let packets = try TSTestPacket.all(out)
        let pcrs = packets.compactMap(\.pcr)
        XCTAssertTrue(packets.filter { $0.pcr != nil }.allSatisfy { $0.pid == 0x100 && !$0.hasPayload })
        XCTAssertEqual(pcrs.first, 700_000 * 27, "the first audio frame sets the PCR")
        XCTAssertTrue(zip(pcrs, pcrs.dropFirst()).allSatisfy { $1 > $0 && $1 - $0 <= 27_000 * 43 })
        XCTAssertGreaterThanOrEqual(pcrs.count, 4)

        var audioOnly = try self.muxer(video: false)
        out = []
        for i in 0..<10 { audioOnly.writeAudio(aac, pts: Int64(i) * 21_333, into: &out) }
        let audioPackets = try TSTestPacket.all(out).filter { $0.pid == 0x101 && $0.unitStart }
        XCTAssertEqual(audioPackets.map(\.pcr), (0..<10).map { UInt64((Int64($0) * 21_333 + 700_000) * 27) })
    }

    func testSectionsGoOnTheCuePIDWithPointerAndStuffing() throws {
        var muxer = try self.muxer()
        var out: [UInt8] = []
        let cue = SpliceInfoSection(command: .insert(SpliceInsert(eventID: 7, spliceTime: 900_000, breakDuration: 2_700_000)))
            .encoded()
        let long = SpliceInfoSection(command: .other(type: 0xFF, bytes: [UInt8](repeating: 0x5A, count: 300))).encoded()
        muxer.writeSection(cue, into: &out)
        muxer.writeSection(long, into: &out)
        let packets = try TSTestPacket.all(out)
        XCTAssertEqual(packets.prefix(2).map(\.pid), [0, 0x1000], "tables before the first cue")
        let cuePackets = packets.filter { $0.pid == 0x102 }
        XCTAssertEqual(cuePackets.map(\.unitStart), [true, true, false])
        XCTAssertEqual(Array(cuePackets[0].payload), [0x00] + cue + [UInt8](repeating: 0xFF, count: 183 - cue.count))
        let units = TSTestPacket.units(packets, pid: 0x102)
        XCTAssertEqual(try units.map(TSTestPacket.section), [cue, long])
        XCTAssertTrue(units[1].dropFirst(1 + long.count).allSatisfy { $0 == 0xFF })

        var withoutCues = try self.muxer(scte35: false)
        var nothing: [UInt8] = []
        withoutCues.writeSection(cue, into: &nothing)
        XCTAssertEqual(nothing, [], "a PID the PMT does not announce is not written")
    }

    func testUpdatesReachTheNextKeyframeAndThePMT() throws {
        var muxer = try self.muxer(scte35: false)
        var out: [UInt8] = []
        muxer.writeVideo(keyframe, dts: 0, pts: 0, keyframe: true, into: &out)
        let newSPS: [UInt8] = [0x67, 0x64, 0x00, 0x28]
        var record = Parts.avcC
        record.replaceSubrange(8..<12, with: newSPS)
        try muxer.updateVideoConfiguration(record)
        muxer.writeVideo(frame, dts: 40_000, pts: 40_000, keyframe: false, into: &out)
        muxer.writeVideo(keyframe, dts: 80_000, pts: 80_000, keyframe: true, into: &out)
        try muxer.updateVideoConfiguration(Parts.hvcC, codec: .hevc)
        muxer.writeVideo(keyframe, dts: 120_000, pts: 120_000, keyframe: true, into: &out)
        let packets = try TSTestPacket.all(out)
        let video = try TSTestPacket.units(packets, pid: 0x100).map(TSTestPES.init)
        XCTAssertEqual(Array(video[1].payload[6..<10]), [0, 0, 0, 1], "no sets before a plain frame")
        XCTAssertEqual(video[1].payload[10], 0x41)
        XCTAssertEqual(Array(video[2].payload[6..<14]), [0, 0, 0, 1] + newSPS, "the new SPS before the next keyframe")
        XCTAssertEqual(Array(video[3].payload.prefix(7)), [0, 0, 0, 1, 0x46, 0x01, 0x50], "HEVC delimiter")
        let pmts = try TSTestPacket.units(packets, pid: 0x1000).map(TSTestPacket.section)
        XCTAssertEqual(pmts.map { ($0[5] >> 1) & 0x1F }, [0, 0, 1], "a new codec is a new PMT version")
        XCTAssertEqual(streams(pmts[2]), [[0x24: 0x100], [0x0F: 0x101]])

        var noAudio = try self.muxer(audio: false, scte35: false)
        out = []
        noAudio.writeAudio(aac, pts: 0, into: &out)
        XCTAssertEqual(out, [], "no audio track")
        noAudio.updateAudioConfiguration(try AACConfiguration(audioSpecificConfig: [0x11, 0x90]))
        noAudio.writeAudio(aac, pts: 0, into: &out)
        let added = try TSTestPacket.all(out)
        let addedPMT = try TSTestPacket.section(XCTUnwrap(TSTestPacket.units(added, pid: 0x1000).first))
        XCTAssertEqual(streams(addedPMT), [[0x1B: 0x100], [0x0F: 0x101]])
        XCTAssertEqual(TSTestPacket.units(added, pid: 0x101).first?[14...15], [0xFF, 0xF1])
    }

    func testAJumpBackIsANewTimeBase() throws {
        var muxer = try self.muxer(audio: false, scte35: false)
        var out: [UInt8] = []
        for i in 0..<60 { muxer.writeVideo(frame, dts: 10_000_000 + Int64(i) * 40_000, pts: 10_000_000 + Int64(i) * 40_000,
                                           keyframe: i == 0, into: &out) }
        let before = out.count
        muxer.writeVideo(frame, dts: 0, pts: 0, keyframe: false, into: &out)
        let packets = try TSTestPacket.all(Array(out[before...]))
        XCTAssertEqual(packets.prefix(2).map(\.pid), [0, 0x1000], "tables again")
        XCTAssertEqual(packets[2].pcr, 700_000 * 27, "the PCR follows the new time base")
        XCTAssertTrue(packets[2].discontinuity)
    }
}
