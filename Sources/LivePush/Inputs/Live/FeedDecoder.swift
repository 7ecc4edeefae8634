import CFFmpeg

/// Decodes a demuxer's first video and audio streams into raw frames at one format: pictures
/// scaled to the channel's size (I420), sound resampled to its rate and channels. What a live
/// feed and a backup file are turned into, so that any of them can stand in for another in
/// one continuous encode (``FailoverInput``).
///
/// Frames carry the source's own timestamps (µs); the ``FailoverInput`` never sends them.
final class FeedDecoder {
    enum Frame {
        case video(VideoFrame)
        case audio(AudioFrame)
    }

    let demuxer: FFDemuxer
    private let video: (decoder: FFDecoder, index: Int32, timeBase: AVRational)?
    private let audio: (decoder: FFDecoder, index: Int32, timeBase: AVRational)?
    private let scaler: FrameScaler
    private let resampler: FFResampler
    private let audioFormat: AudioFormat

    init(demuxer: FFDemuxer, size: VideoSize, audio format: AudioFormat) throws(LivePushError) {
        self.demuxer = demuxer
        audioFormat = format
        func open(_ stream: DemuxedStream?) throws(LivePushError) -> (FFDecoder, Int32, AVRational)? {
            guard let stream, let parameters = demuxer.codecParameters(of: stream.index) else { return nil }
            return (try FFDecoder(parameters: parameters, timeBase: stream.timeBase, threads: 1), stream.index, stream.timeBase)
        }
        video = try open(demuxer.streams.first { $0.mediaType == .video && !$0.isAttachedPicture })
        audio = try open(demuxer.streams.first { $0.mediaType == .audio })
        guard video != nil || audio != nil else { throw LivePushError(.noUsableStream, demuxer.path) }
        scaler = try FrameScaler(width: size.width, height: size.height)
        resampler = try FFResampler(format: format, failure: .transcodeFailed)
    }

    var hasVideo: Bool { video != nil }
    var hasAudio: Bool { audio != nil }

    /// The packet ``decodeNext(into:)`` read last: its byte position in the input (-1 when
    /// unknown), its time (µs) and whether it is the video's.
    private(set) var lastPacket: (position: Int64, time: Int64?, isVideo: Bool) = (-1, nil, false)

    /// Reads one packet and appends what it decodes to; false at the end of the input.
    func decodeNext(into frames: inout [Frame]) throws(LivePushError) -> Bool {
        guard try demuxer.read() else { return false }
        let packet = demuxer.packet
        let isVideo = video.map { packet.pointee.stream_index == $0.index } ?? false
        lastPacket = (demuxer.packetPosition, demuxer.packetMicros, isVideo)
        if let video, isVideo {
            try video.decoder.send(packet)
            try receiveVideo(video, into: &frames)
        } else if let audio, packet.pointee.stream_index == audio.index {
            try audio.decoder.send(packet)
            try receiveAudio(audio, into: &frames)
        }
        return true
    }

    /// At the end of the input: what the decoders still hold (a decoder that reorders keeps a
    /// picture or two back). They take packets again afterwards only after ``rewind()``.
    func drain(into frames: inout [Frame]) throws(LivePushError) {
        if let video {
            try video.decoder.send(nil)
            try receiveVideo(video, into: &frames)
        }
        if let audio {
            try audio.decoder.send(nil)
            try receiveAudio(audio, into: &frames)
        }
    }

    private func receiveVideo(_ video: (decoder: FFDecoder, index: Int32, timeBase: AVRational),
                              into frames: inout [Frame]) throws(LivePushError) {
        while try video.decoder.receive() {
            let decoded = video.decoder.frame
            let time = FF.micros(decoded.pointee.best_effort_timestamp, video.timeBase) ?? 0
            let picture = scaler.fits(decoded) ? decoded : try scaler.scale(decoded)
            // Shares the scaler's buffer: it is copied before the scaler writes it again.
            if let frame = try VideoFrame(referencing: picture, timestamp: time) { frames.append(.video(frame)) }
        }
    }

    private func receiveAudio(_ audio: (decoder: FFDecoder, index: Int32, timeBase: AVRational),
                              into frames: inout [Frame]) throws(LivePushError) {
        while try audio.decoder.receive() {
            let decoded = audio.decoder.frame
            let time = FF.micros(decoded.pointee.best_effort_timestamp, audio.timeBase) ?? 0
            let format = audioFormat
            try resampler.convert(decoded) { planes, count throws(LivePushError) in
                var block = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels,
                                           sampleCount: Int(count), timestamp: time)
                let sources = (0..<format.channels).map { UnsafePointer(UnsafeRawPointer(planes[$0]!).assumingMemoryBound(to: Float.self)) }
                try block.replaceSamples(at: 0, fromPlanes: sources, count: Int(count))
                frames.append(.audio(block))
            }
        }
    }

    /// Back to the start (a looped backup); the decoders forget what they held.
    func rewind() -> Bool {
        video?.decoder.flush()
        audio?.decoder.flush()
        resampler.reset()
        return demuxer.seekToStart()
    }
}
