import LivePushWire

/// One RTMP media message: an FLV tag body (`header` + `payload`) with its type and timestamp.
///
/// The body stays in two parts so that a frame's data is copied once, into the send buffer.
struct FLVMessage {
    var type: FLVTagType
    var timestampMs: UInt32
    /// What precedes `payload` in the tag body (the AVC or AAC frame header), inline.
    var header: FLVTagPrefix = .none
    var payload: [UInt8]

    var bodySize: Int { header.count + payload.count }
}

/// Turns a source's stream description and packets into FLV tag bodies.
///
/// It follows the codec configuration: a sequence-header packet (an input switch changed it)
/// replaces the track's configuration, so the header sent after a reconnect is the one the
/// next frames need.
struct FLVPacketizer {
    private(set) var info: StreamInfo

    /// `@setDataFrame onMetaData`, then the AVC and AAC sequence headers: what a server and
    /// a player need before the first frame, sent again after every (re)connect.
    func header(timestampMs: UInt32 = 0) -> [FLVMessage] {
        var messages = [FLVMessage(type: .script, timestampMs: timestampMs,
                                   payload: FLVBody.metadata(metadata, withSetDataFrame: true))]
        if let video = info.video {
            messages.append(FLVMessage(type: .video, timestampMs: timestampMs,
                                       payload: Self.videoSequenceHeader(video.decoderConfiguration, codec: video.codec)))
        }
        if let audio = info.audio {
            messages.append(FLVMessage(type: .audio, timestampMs: timestampMs, payload: Self.audioSequenceHeader(audio)))
        }
        return messages
    }

    init(info: StreamInfo) {
        self.info = info
    }

    mutating func message(for packet: MediaPacket) -> FLVMessage {
        let timestampMs = UInt32(truncatingIfNeeded: max(0, packet.dts) / 1000)
        if packet.isSequenceHeader { return sequenceHeader(packet, timestampMs: timestampMs) }
        switch packet.kind {
        case .data, .cue:
            // Sent as is: not wrapped in @setDataFrame, which would make a cue metadata.
            return FLVMessage(type: .script, timestampMs: timestampMs, payload: packet.data)
        case .video:
            let cts = Int32(clamping: (packet.pts - packet.dts + 500) / 1000)
            let prefix = info.video?.codec.enhancedRTMP.map {
                FLVBody.exVideoFramePrefix($0, keyframe: packet.isKeyframe, compositionTimeMs: cts)
            } ?? FLVBody.avcFramePrefix(keyframe: packet.isKeyframe, compositionTimeMs: cts)
            return FLVMessage(type: .video, timestampMs: timestampMs, header: prefix, payload: packet.data)
        case .audio:
            let audio = info.audio
            let prefix = audio?.codec.enhancedRTMP.map { FLVBody.exAudioFramePrefix($0) }
                ?? FLVBody.aacFramePrefix(sampleRate: audio?.sampleRate ?? 44100, channels: audio?.channels ?? 2)
            return FLVMessage(type: .audio, timestampMs: timestampMs, header: prefix, payload: packet.data)
        }
    }

    private mutating func sequenceHeader(_ packet: MediaPacket, timestampMs: UInt32) -> FLVMessage {
        info.adopt(sequenceHeader: packet)
        switch packet.kind {
        case .video:
            return FLVMessage(type: .video, timestampMs: timestampMs,
                              payload: Self.videoSequenceHeader(packet.data, codec: info.video?.codec ?? .h264))
        case .data, .cue:
            return FLVMessage(type: .script, timestampMs: timestampMs, payload: packet.data)
        case .audio:
            let audio = info.audio
            return FLVMessage(type: .audio, timestampMs: timestampMs,
                              payload: FLVBody.aacSequenceHeader(packet.data, sampleRate: audio?.sampleRate ?? 44100,
                                                                 channels: audio?.channels ?? 2))
        }
    }

    /// Enhanced RTMP's `SequenceEnd`s after a stream sent whole; nothing for legacy H.264 and
    /// AAC (the AVC end-of-sequence tag is left out, as FFmpeg and OBS leave it out).
    func trailer(timestampMs: UInt32) -> [FLVMessage] {
        var messages: [FLVMessage] = []
        if let enhanced = info.video?.codec.enhancedRTMP {
            messages.append(FLVMessage(type: .video, timestampMs: timestampMs, payload: FLVBody.exVideoSequenceEnd(enhanced)))
        }
        if let enhanced = info.audio?.codec.enhancedRTMP {
            messages.append(FLVMessage(type: .audio, timestampMs: timestampMs, payload: FLVBody.exAudioSequenceEnd(enhanced)))
        }
        return messages
    }

    /// AAC's sequence header (legacy FLV), or Enhanced RTMP v2's audio `SequenceStart` with
    /// the `OpusHead`.
    static func audioSequenceHeader(_ audio: AudioTrackInfo) -> [UInt8] {
        guard let enhanced = audio.codec.enhancedRTMP else {
            return FLVBody.aacSequenceHeader(audio.audioSpecificConfig, sampleRate: audio.sampleRate, channels: audio.channels)
        }
        return FLVBody.exAudioSequenceStart(enhanced, configuration: audio.opusHead)
    }

    /// H.264's AVC sequence header (legacy FLV), or Enhanced RTMP's `SequenceStart`.
    static func videoSequenceHeader(_ configuration: [UInt8], codec: VideoCodec) -> [UInt8] {
        guard let enhanced = codec.enhancedRTMP else { return FLVBody.avcSequenceHeader(configuration) }
        return FLVBody.exVideoSequenceStart(enhanced, configuration: configuration)
    }

    var metadata: [AMF0Property] {
        var properties: [AMF0Property] = [AMF0Property("duration", .number(0))]
        if let video = info.video {
            properties += [
                AMF0Property("width", .number(Double(video.width))),
                AMF0Property("height", .number(Double(video.height))),
                AMF0Property("videodatarate", .number(Double(video.bitrate) / 1000)),
                AMF0Property("framerate", .number(video.frameRate)),
                AMF0Property("videocodecid", .number(video.codec.metadataCodecID)),
            ]
        }
        if let audio = info.audio {
            properties += [
                AMF0Property("audiodatarate", .number(Double(audio.bitrate) / 1000)),
                AMF0Property("audiosamplerate", .number(Double(audio.sampleRate))),
                AMF0Property("audiosamplesize", .number(16)),
                AMF0Property("stereo", .boolean(audio.channels > 1)),
                // AAC's SoundFormat, or the FourCC as a number (as FFmpeg's FLV muxer writes it).
                AMF0Property("audiocodecid", .number(audio.codec.enhancedRTMP.map { Double($0.rawValue) } ?? 10)),
            ]
        }
        properties.append(AMF0Property("encoder", .string("LivePush")))
        return properties
    }
}
