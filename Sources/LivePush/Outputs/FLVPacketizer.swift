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
///
/// An output with several variants sends those its ``RTMPTrackPlan`` chose: track 0 as the
/// stream's own video, the others as E-RTMP v2 multitrack tracks (``FLVMultitrackVideo``),
/// each with its SequenceStart in a tag of its own.
struct FLVPacketizer {
    /// The stream as sent: its `video` is track 0's.
    private(set) var info: StreamInfo
    /// Track `i` carries variant `tracks[i]` (``RTMPTrackPlan/tracks``).
    private let tracks: [UInt8]
    /// The videos of tracks 1, 2, ...
    private var trackVideos: [VideoTrackInfo]

    /// `@setDataFrame onMetaData`, then the video and audio sequence headers (one tag per
    /// track): what a server and a player need before the first frame, sent again after every
    /// (re)connect.
    func header(timestampMs: UInt32 = 0) -> [FLVMessage] {
        var messages = [FLVMessage(type: .script, timestampMs: timestampMs,
                                   payload: FLVBody.metadata(metadata, withSetDataFrame: true))]
        if let video = info.video {
            messages.append(FLVMessage(type: .video, timestampMs: timestampMs,
                                       payload: Self.videoSequenceHeader(video.decoderConfiguration, codec: video.codec)))
        }
        for (index, video) in trackVideos.enumerated() {
            messages.append(FLVMessage(type: .video, timestampMs: timestampMs,
                                       payload: Self.trackSequenceStart(video.decoderConfiguration, codec: video.codec,
                                                                        trackID: UInt8(index + 1))))
        }
        if let audio = info.audio {
            messages.append(FLVMessage(type: .audio, timestampMs: timestampMs, payload: Self.audioSequenceHeader(audio)))
        }
        return messages
    }

    /// `tracks`: the plan's (nil: the output's first variant only, as track 0).
    init(info: StreamInfo, tracks: [UInt8]? = nil) {
        let variants = info.variants.isEmpty ? (info.video.map { [$0] } ?? []) : info.variants
        let tracks = (tracks ?? [0]).filter { Int($0) < variants.count }
        var sent = info
        if let first = tracks.first { sent.video = variants[Int(first)] }
        self.info = sent
        self.tracks = tracks.isEmpty ? [0] : tracks
        trackVideos = tracks.dropFirst().map { variants[Int($0)] }
    }

    /// Whether this connection sends `packet`: a ladder's video variants the plan left out are not.
    func carries(_ packet: MediaPacket) -> Bool {
        packet.kind != .video || tracks.contains(packet.variant)
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
            if let track = tracks.firstIndex(of: packet.variant), track > 0 {
                let codec = trackVideos[track - 1].codec
                return FLVMessage(type: .video, timestampMs: timestampMs,
                                  header: FLVMultitrackVideo.framePrefix(fourCC: Self.trackFourCC(codec), trackID: UInt8(track),
                                                                         keyframe: packet.isKeyframe, compositionTimeMs: cts),
                                  payload: packet.data)
            }
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
        if packet.kind == .video, let track = tracks.firstIndex(of: packet.variant), track > 0 {
            trackVideos[track - 1].decoderConfiguration = packet.data
            return FLVMessage(type: .video, timestampMs: timestampMs,
                              payload: Self.trackSequenceStart(packet.data, codec: trackVideos[track - 1].codec, trackID: UInt8(track)))
        }
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

    /// A multitrack track's FourCC: H.264 goes as `avc1` there (E-RTMP tags only).
    static func trackFourCC(_ codec: VideoCodec) -> [UInt8] {
        codec.enhancedRTMP?.fourCCBytes ?? FLVMultitrackVideo.avc1
    }

    /// A multitrack track's `SequenceStart`, in a tag of its own.
    static func trackSequenceStart(_ configuration: [UInt8], codec: VideoCodec, trackID: UInt8) -> [UInt8] {
        FLVMultitrackVideo.sequenceStart(fourCC: trackFourCC(codec), trackID: trackID, configuration: configuration)
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
        // E-RTMP v2: the other tracks' metadata, by track id (track 0's is the top level).
        if !trackVideos.isEmpty {
            properties.append(AMF0Property("videoTrackIdInfoMap", .object(trackVideos.enumerated().map { index, video in
                AMF0Property(String(index + 1), .object([
                    AMF0Property("width", .number(Double(video.width))),
                    AMF0Property("height", .number(Double(video.height))),
                    AMF0Property("videodatarate", .number(Double(video.bitrate) / 1000)),
                    AMF0Property("framerate", .number(video.frameRate)),
                    AMF0Property("videocodecid", .number(video.codec.metadataCodecID)),
                ]))
            })))
        }
        properties.append(AMF0Property("encoder", .string("LivePush")))
        return properties
    }
}
