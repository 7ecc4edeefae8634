import LivePushWire

/// What the MPEG-TS outputs (SRT, HLS) share: the muxer for a push's stream and how each
/// packet goes into it.
extension TSMuxer {
    /// The muxer for a stream described by `info`: H.264 or HEVC (MPEG-TS as FFmpeg 5.1 reads
    /// it has no AV1 or VP9), AAC, and the SCTE-35 PID. `output` names the output in the error
    /// (`an srt:// output`).
    static func make(for info: StreamInfo, output: String) throws(LivePushError) -> TSMuxer {
        var configuration = TSMuxer.Configuration(scte35: true)
        if let video = info.video {
            switch video.codec {
            case .h264: configuration.video = .h264
            case .hevc: configuration.video = .hevc
            case .av1, .vp9:
                throw LivePushError(.outputSettingsInvalid, "\(output) carries H.264 or HEVC, not \(video.codec.rawValue)")
            }
            configuration.videoConfiguration = video.decoderConfiguration
        }
        if let audio = info.audio {
            configuration.audio = aac(audio.audioSpecificConfig, audio)
        }
        do {
            return try TSMuxer(configuration)
        } catch {
            throw LivePushError(.outputSettingsInvalid, "MPEG-TS cannot carry this stream: \(error)")
        }
    }

    /// A section stamped on the output timeline, as the TS carries it: `pts_adjustment` gains the
    /// muxer's offset (output time 0 is PTS 1.4 s), so `splice_time + pts_adjustment` is a PTS.
    static func moveOntoTSTimeline(_ section: inout SpliceInfoSection) {
        section.ptsAdjustment = (section.ptsAdjustment + TSClock.ticks90kHz(0)) & SCTE35.ticksMask
    }

    /// ADTS's description of the AAC track: from its AudioSpecificConfig, else its rate and channels.
    private static func aac(_ audioSpecificConfig: [UInt8], _ track: AudioTrackInfo) -> AACConfiguration? {
        (try? AACConfiguration(audioSpecificConfig: audioSpecificConfig))
            ?? (try? AACConfiguration(sampleRate: track.sampleRate, channels: track.channels))
    }

    /// Writes `packet`, stamped on the output timeline, as TS packets appended to `out`. A
    /// sequence header changes the configuration of what follows and writes nothing. A `.cue`
    /// packet (a splice_info_section) goes on the SCTE-35 PID, its splice time moved onto the
    /// TS timeline by the muxer's offset (`pts_adjustment`). RTMP's data messages (`onAdCue`,
    /// `onCuePoint`) have no place in a TS and are left out.
    mutating func write(_ packet: MediaPacket, into out: inout [UInt8]) {
        if packet.isSequenceHeader {
            switch packet.kind {
            case .video: try? updateVideoConfiguration(packet.data)
            case .audio: if let audio = try? AACConfiguration(audioSpecificConfig: packet.data) { updateAudioConfiguration(audio) }
            case .data, .cue: break
            }
            return
        }
        switch packet.kind {
        case .video:
            writeVideo(packet.data, dts: packet.dts, pts: packet.pts, keyframe: packet.isKeyframe, into: &out)
        case .audio:
            writeAudio(packet.data, pts: packet.pts, into: &out)
        case .cue:
            // The push's own cues (its breaks, or a source's, parsed when they came in): one that
            // does not parse is not written, as before it reached here.
            guard var section = try? SpliceInfoSection(parsing: packet.data) else { return }
            Self.moveOntoTSTimeline(&section)
            writeSection(section.encoded(), into: &out)
        case .data:
            break
        }
    }
}
