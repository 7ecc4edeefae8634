import CFFmpeg

/// Opens media files as ``MediaInput``s.
///
/// Copy or transcode is decided per track: video already in the codec asked for
/// (``MediaSourceOptions/videoCodec``, H.264 by default; with `.copy` H.264, HEVC, AV1 or VP9)
/// is passed through (H.264 converted to AVCC when it is Annex B) and AAC audio likewise (ADTS
/// headers stripped); any other codec, or every track when ``MediaSourceOptions/forceTranscode``
/// is set, is decoded and re-encoded to that codec (H.264 for `.copy`) or AAC (FFmpeg's native
/// encoder). So an MP4 with H.264 and MP3 copies its video and transcodes only its audio.
///
/// Only the first video stream (attached pictures such as cover art are ignored) and the
/// first audio stream are used.
public enum MediaInputFactory {
    /// Opens a media file as a source; throws for a missing file, not media, or no usable stream.
    public static func open(path: String, options: MediaSourceOptions = MediaSourceOptions()) throws(LivePushError) -> any MediaInput {
        try open(path: path, options: options, stages: FrameStages())
    }

    static func open(path: String, options: MediaSourceOptions, stages: FrameStages) throws(LivePushError) -> any MediaInput {
        let demuxer = try FFDemuxer(path: path)
        if let start = options.startTime, start > 0, !demuxer.seek(toMicros: start) {
            throw LivePushError(.mediaReadFailed, "\(path): cannot seek to \(Double(start) / 1_000_000) s")
        }
        let videoStream = demuxer.streams.first { $0.mediaType == .video && !$0.isAttachedPicture }
        let audioStream = demuxer.streams.first { $0.mediaType == .audio }
        guard videoStream != nil || audioStream != nil else {
            throw LivePushError(.noUsableStream, path)
        }
        var video: (any VideoPacketProcessor)?
        if let stream = videoStream {
            if !options.needsVideoEncoding, options.videoCodec != .encode(.h264),
               let copy = EnhancedVideoCopyProcessor(stream: stream),
               options.videoCodec == .copy || options.videoCodec == .encode(copy.codec) {
                video = copy
            } else if stream.isH264 && !options.needsVideoEncoding
                        && (options.videoCodec == .copy || options.videoCodec == .encode(.h264)) {
                video = VideoCopyProcessor(stream: stream)
            } else {
                video = try VideoDecodeProcessor(stream: stream, demuxer: demuxer, options: options, stages: stages)
            }
        }
        var audio: (any AudioPacketProcessor)?
        // Mixing mode (BGM or effects playing at start, or `audioMixing`): the audio is encoded,
        // and a video-only source gets a generated track for the music to play on.
        let mixing = options.audioMixing || stages.mixer.hasSources
        if let stream = audioStream {
            if stream.isAAC && !options.needsAudioEncoding && !mixing {
                audio = AudioCopyProcessor(stream: stream)
            } else {
                audio = try AudioDecodeProcessor(stream: stream, demuxer: demuxer, options: options)
            }
        } else if mixing && video != nil {
            audio = GeneratedAudioProcessor(options: options)
        }
        return try FileInput(demuxer: demuxer, video: video, audio: audio)
    }
}
