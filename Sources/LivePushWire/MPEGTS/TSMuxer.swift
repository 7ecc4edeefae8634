/// Writes one MPEG-TS program: H.264 or HEVC video, AAC audio, and SCTE-35 cues on a PID of
/// their own — what ffmpeg 5.1's muxer cannot write, and why LivePush writes MPEG-TS itself
/// (for SRT, 7 packets per message).
///
/// Each `write` call appends whole 188-byte packets to `out`, so a buffer that starts empty
/// stays a multiple of 188. The muxer interleaves nothing and buffers nothing: packets go out
/// in the order of the calls, which should be decode order across the tracks (within the
/// 0.7 s the PCR runs behind; see `TSClock`). Times are microseconds on one clock for all
/// tracks; a jump back of more than a second is taken as a new time base (the tables are
/// repeated and the next PCR carries the discontinuity indicator).
///
/// - PIDs: see `TSPID` (PMT 0x1000, video 0x100, audio 0x101, SCTE-35 0x102).
/// - PAT and PMT open the stream, precede every video keyframe, and come at least every
///   100 ms of stream time.
/// - The PCR travels on the video PID (on the audio PID without video): with every access
///   unit, and in a packet of its own when audio runs 40 ms past the last one.
public struct TSMuxer: Sendable {
    public static let packetSize = TSPacketizer.packetSize
    /// SRT carries 7 transport packets per message: 1316 bytes, which fits a 1500-byte MTU
    /// with the IP, UDP and SRT headers.
    public static let packetsPerSRTMessage = 7
    public static let srtMessageSize = packetSize * packetsPerSRTMessage
    /// A null packet (PID 0x1FFF): stuffing every demuxer skips, for a transport that needs
    /// bytes on the wire that carry nothing.
    public static let nullPacket: [UInt8] = [TSPacketizer.syncByte, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: packetSize - 4)
    /// The longest stream time between two PAT/PMT pairs, in microseconds.
    public static let programTablesInterval: Int64 = 100_000
    /// The longest PCR time between two PCRs when the audio track sets the pace, in microseconds
    /// (the DVB limit; ISO/IEC 13818-1 allows 100 ms).
    public static let pcrInterval: Int64 = 40_000
    /// A step back in time larger than this starts a new time base.
    static let timeBaseResetThreshold: Int64 = 1_000_000

    private var configuration: Configuration
    private var video: VideoDecoderConfiguration?
    private var packetizer = TSPacketizer()
    private let programAssociation = TSProgramTables.programAssociation()
    private var programMap: [UInt8] = []
    private var programMapVersion: UInt8 = 0
    /// The latest time written (µs): the pace of the tables and of the PCR.
    private var now: Int64?
    private var tablesWrittenAt: Int64?
    private var tablesWritten = false
    /// The last PCR written (µs on the PCR's time line); it never goes back within a time base.
    private var lastPCR: Int64?
    private var pcrDiscontinuity = false

    public init(_ configuration: Configuration) throws(TSConfigurationError) {
        self.configuration = configuration
        if let codec = configuration.video {
            video = try VideoDecoderConfiguration(codec: codec, record: configuration.videoConfiguration)
        }
        programMap = buildProgramMap()
    }

    /// A video access unit: `avcc` is length-prefixed NAL units (as in MP4 and FLV; the prefix
    /// size is the configuration record's, 4 without one). `dts` and `pts` in microseconds.
    /// Nothing is written when the configuration has no video.
    public mutating func writeVideo(_ avcc: [UInt8], dts: Int64, pts: Int64, keyframe: Bool, into out: inout [UInt8]) {
        guard let video else { return }
        advance(to: dts)
        if keyframe || tablesDue { writeTables(into: &out) }
        var pes = PESHeader.bytes(streamID: PESHeader.videoStreamID, pts: TSClock.ticks90kHz(pts),
                                  dts: TSClock.ticks90kHz(dts), payloadLength: nil)
        AnnexBAccessUnit.append(avcc, configuration: video, keyframe: keyframe, to: &pes)
        var signals = nextPCR(at: dts)
        signals.randomAccess = keyframe
        packetizer.writePES(pes, pid: TSPID.video, signals: signals, into: &out)
    }

    /// A raw AAC frame (no ADTS header; the muxer writes one). `pts` in microseconds.
    /// Nothing is written when the configuration has no audio, nor for a frame longer than
    /// ADTS can describe (8184 bytes).
    public mutating func writeAudio(_ aac: [UInt8], pts: Int64, into out: inout [UInt8]) {
        guard let audio = configuration.audio, let adts = audio.adtsHeader(rawLength: aac.count) else { return }
        advance(to: pts)
        if tablesDue { writeTables(into: &out) }
        var pes = PESHeader.bytes(streamID: PESHeader.audioStreamID, pts: TSClock.ticks90kHz(pts), dts: nil,
                                  payloadLength: adts.count + aac.count)
        pes.append(contentsOf: adts)
        pes.append(contentsOf: aac)
        var signals = TSPacketizer.Signals()
        if pcrPID == TSPID.audio {
            signals = nextPCR(at: pts)
        } else if pcrDue(at: pts) {
            let pcr = nextPCR(at: pts)
            packetizer.writePCROnly(pid: pcrPID, pcr: pcr.pcr ?? 0, discontinuity: pcr.discontinuity, into: &out)
        }
        packetizer.writePES(pes, pid: TSPID.audio, signals: signals, into: &out)
    }

    /// A splice_info_section (table_id 0xFC through its CRC, e.g. `SpliceInfoSection.encoded()`)
    /// on the SCTE-35 PID. Nothing is written unless the configuration announces SCTE-35.
    public mutating func writeSection(_ section: [UInt8], into out: inout [UInt8]) {
        guard configuration.scte35, !section.isEmpty else { return }
        if !tablesWritten { writeTables(into: &out) }
        packetizer.writeSection(section, pid: TSPID.scte35, into: &out)
    }

    /// The next packet written is preceded by PAT and PMT, whatever it is: a stream cut into
    /// files (HLS segments) opens each file with them, also where no keyframe does (sound only).
    public mutating func repeatTablesAtNextPacket() {
        tablesWrittenAt = nil
    }

    /// A new video configuration record (an input switch), and the codec when it changes.
    /// Its parameter sets go before the next keyframe; a new codec also gives the PMT a new
    /// version, written before the next packet.
    public mutating func updateVideoConfiguration(_ record: [UInt8], codec: VideoCodec? = nil) throws(TSConfigurationError) {
        let codec = codec ?? configuration.video ?? .h264
        video = try VideoDecoderConfiguration(codec: codec, record: record)
        configuration.videoConfiguration = record
        if configuration.video != codec {
            configuration.video = codec
            programMapChanged()
        }
    }

    /// A new audio configuration (an input switch): the ADTS headers of the next frames say
    /// it. Adding audio to a program without it gives the PMT a new version.
    public mutating func updateAudioConfiguration(_ audio: AACConfiguration) {
        let added = configuration.audio == nil
        configuration.audio = audio
        if added { programMapChanged() }
    }

    // MARK: Pace of the tables and the PCR

    /// The PID whose packets carry the PCR.
    var pcrPID: UInt16 {
        configuration.video != nil ? TSPID.video : configuration.audio != nil ? TSPID.audio : TSPID.none
    }

    private var tablesDue: Bool {
        guard let now, let tablesWrittenAt else { return true }
        return now - tablesWrittenAt >= Self.programTablesInterval
    }

    private mutating func advance(to time: Int64) {
        if let now, time < now - Self.timeBaseResetThreshold {
            tablesWrittenAt = nil
            lastPCR = nil
            pcrDiscontinuity = true
            self.now = time
        } else {
            now = max(now ?? time, time)
        }
    }

    private func pcrDue(at time: Int64) -> Bool {
        guard let lastPCR else { return true }
        return TSClock.pcrTime(at: time) - lastPCR >= Self.pcrInterval
    }

    /// The PCR for a packet of time `time`, never before the last one.
    private mutating func nextPCR(at time: Int64) -> TSPacketizer.Signals {
        let pcr = max(TSClock.pcrTime(at: time), lastPCR ?? .min)
        lastPCR = pcr
        defer { pcrDiscontinuity = false }
        return TSPacketizer.Signals(pcr: pcr, discontinuity: pcrDiscontinuity)
    }

    // MARK: Program tables

    private mutating func writeTables(into out: inout [UInt8]) {
        packetizer.writeSection(programAssociation, pid: TSPID.programAssociation, into: &out)
        packetizer.writeSection(programMap, pid: TSPID.programMap, into: &out)
        tablesWrittenAt = now
        tablesWritten = true
    }

    private mutating func programMapChanged() {
        programMapVersion = (programMapVersion + 1) & 0x1F
        programMap = buildProgramMap()
        tablesWrittenAt = nil
    }

    private func buildProgramMap() -> [UInt8] {
        var streams: [TSProgramTables.Stream] = []
        if let codec = configuration.video { streams.append((codec.streamType, TSPID.video, [])) }
        if configuration.audio != nil { streams.append((.aacADTS, TSPID.audio, [])) }
        var programInfo: [UInt8] = []
        if configuration.scte35 {
            programInfo = TSProgramTables.registrationDescriptor(SCTE35.cueIdentifier)
            streams.append((.scte35, TSPID.scte35, []))
        }
        return TSProgramTables.programMap(pcrPID: pcrPID, programInfo: programInfo, streams: streams,
                                          version: programMapVersion)
    }
}
