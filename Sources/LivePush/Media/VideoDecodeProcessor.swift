import CFFmpeg

/// The video of a file that is not copied: decode → (I420 conversion) → (frame-rate slots),
/// yielding raw pictures (``MediaPacket/rawPicture(_:duration:keyframe:shownAsIs:)``). The
/// detector, the filters, the scale and the H.264 encode happen after the clock, in the push's
/// one encode (``VideoEncodeStage``), which opens with the settings this stream declares
/// (``VideoTrackInfo/pictureSettings``) when the push starts on it.
///
/// Runs on the producer thread; libavcodec's decoder uses threads of its own. Timestamps stay
/// on the file's timeline (the push's ``OutputClock`` maps them). The first picture, and the
/// first after another input was on air or after a loop, is marked as a keyframe: the encode
/// starts a GOP there, and the switcher may start a segment on it.
final class VideoDecodeProcessor: VideoPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.video
    private let stream: DemuxedStream
    private let options: MediaSourceOptions
    private let decoder: FFDecoder
    /// What the push's encode uses for these pictures: size, rate, bitrate, GOP.
    private let settings: VideoEncoderSettings
    /// Converts decoded pictures filters cannot take (e.g. YUV444, RGB) to I420, source size.
    private var converter: FrameScaler?

    /// Last decoded timestamp (µs, source timeline).
    private var lastDecoded: Int64?
    /// Constant-frame-rate output: the time of the next frame to emit (only with options.frameRate).
    private var nextOutputTime: Int64?
    /// The next picture starts a GOP (the first, after a switch back, after a loop).
    private var forceKeyframe = true
    /// A keyframe is asked for at the first frame at or after this time (µs).
    private var keyframeAt: Int64?

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions, stages: FrameStages) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "video stream \(stream.index)")
        }
        self.stream = stream
        self.options = options
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase, threads: Self.decoderThreads(for: stream))
        settings = try VideoEncoderSettings(stream: stream, options: options)
        // The push decodes and encodes its video: filters can be added while it runs.
        stages.figures.videoEncoderOpened()
    }

    /// One decoder thread up to 1080p: the encoder's threads already keep both cores busy, and a
    /// second frame thread holds pictures of its own (transcode benchmark: 94 against 99 MiB
    /// peak RSS, the same fps). Larger pictures get two, so that decoding keeps up.
    private static func decoderThreads(for stream: DemuxedStream) -> Int32 {
        stream.width * stream.height <= 1920 * 1088 ? 1 : 2
    }

    var isConfigured: Bool { true }

    var trackInfo: VideoTrackInfo? {
        var track = VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height, frameRate: settings.frameRate,
                                   bitrate: settings.initialBitrate, decoderConfiguration: [])
        track.pictureSettings = settings
        return track
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(packet)
        while try decoder.receive() { try handle(decoder.frame, into: &out) }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(nil)
        while try decoder.receive() { try handle(decoder.frame, into: &out) }
    }

    func reset() throws(LivePushError) {
        decoder.flush()
        lastDecoded = nil
        nextOutputTime = nil
        forceKeyframe = true
    }

    /// Nothing is held here (the push's encode drains itself); the picture after the switch
    /// back starts a GOP.
    func suspend(into out: inout [MediaPacket]) throws(LivePushError) {
        forceKeyframe = true
    }

    func requestKeyframe(atOrAfter time: Int64) {
        keyframeAt = time
    }

    // MARK: - Frames

    private func handle(_ decoded: UnsafeMutablePointer<AVFrame>, into out: inout [MediaPacket]) throws(LivePushError) {
        let time = sourceTime(of: decoded)
        // Before the start point (a clip's `in`): decoded for the frames after it, not sent.
        if let start = options.startTime, time < start - settings.frameDuration / 2 { return }
        let times = outputTimes(for: time)
        guard !times.isEmpty, let frame = try filterable(decoded, at: time) else { return }
        for t in times {
            var picture = frame  // shares the pixels: a filter that writes gets a copy of its own
            picture.timestamp = t
            let asked = keyframeAt.map { t >= $0 } ?? false
            if asked { keyframeAt = nil }
            out.append(.rawPicture(picture, duration: settings.frameDuration, keyframe: forceKeyframe || asked))
            forceKeyframe = false
        }
    }

    /// The decoded frame's presentation time in microseconds, strictly increasing.
    private func sourceTime(of frame: UnsafeMutablePointer<AVFrame>) -> Int64 {
        let raw = frame.pointee.best_effort_timestamp != FF.noPTS ? frame.pointee.best_effort_timestamp : frame.pointee.pts
        var time = FF.micros(raw, stream.timeBase) ?? ((lastDecoded ?? -settings.frameDuration) + settings.frameDuration)
        if let last = lastDecoded, time <= last { time = last + 1 }
        lastDecoded = time
        return time
    }

    /// Output timestamps for a frame at `time`: itself, or with a fixed output rate, each
    /// output slot it covers (none when the source is faster, several when it is slower).
    private func outputTimes(for time: Int64) -> [Int64] {
        guard options.frameRate != nil else { return [time] }
        let step = settings.frameDuration
        var next = nextOutputTime ?? time
        var times: [Int64] = []
        // A slot belongs to the frame nearest to it; a gap of more than a second is not filled.
        while next <= time + step / 2 {
            if time - next < 1_000_000 { times.append(next) }
            next += step
        }
        nextOutputTime = next
        return times
    }

    /// The decoded picture as a ``VideoFrame`` in I420 or NV12 (converted when needed). It
    /// references the decoder's frame: the decoder gets a new one for its next picture.
    private func filterable(_ decoded: UnsafeMutablePointer<AVFrame>, at time: Int64) throws(LivePushError) -> VideoFrame? {
        if let frame = try VideoFrame(referencing: decoded, timestamp: time) { return frame }
        if converter == nil {
            converter = try FrameScaler(width: Int(decoded.pointee.width) & ~1, height: Int(decoded.pointee.height) & ~1)
        }
        guard let converter else { return nil }
        return try VideoFrame(referencing: converter.scale(decoded), timestamp: time)
    }
}
