import CFFmpeg

/// The raw-frame video pipeline: decode → (I420 conversion) → detector tap → filter chain →
/// (frame-rate conversion) → scale → H.264 encode.
///
/// Everything runs on the producer thread; libavcodec's decoder and libx264 use threads of
/// their own. It measures its capacity
/// for the low-performance warning. Timestamps stay on the file's timeline (the push's
/// ``OutputClock`` maps them); when another input goes on air (a pause image) the encoder is
/// drained, and a fresh one starts on a keyframe when this one comes back.
final class VideoTranscodeProcessor: VideoPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.video
    private let stream: DemuxedStream
    private let options: MediaSourceOptions
    /// The push's raw-frame stages (detector, filters, adaptive bitrate), run on its producer.
    private let stages: FrameStages
    private let decoder: FFDecoder
    private let settings: VideoEncoderSettings
    private var encoder: VideoEncoder
    private var monitor: PerformanceMonitor
    /// Converts decoded pictures filters cannot take (e.g. YUV444, RGB) to I420, source size.
    private var converter: FrameScaler?
    /// Scales to the output size.
    private let scaler: FrameScaler
    /// Adaptive bitrate follows this encoder from its first frame on air.
    private var announcedToStages = false

    /// Last decoded timestamp (µs, source timeline).
    private var lastDecoded: Int64?
    /// Constant-frame-rate output: the time of the next frame to emit (only with options.frameRate).
    private var nextOutputTime: Int64?
    private var forceKeyframe = false
    /// A keyframe is asked for at the first frame at or after this time (µs).
    private var keyframeAt: Int64?
    /// The encoder was drained for a switch; a fresh one is made when a frame comes (a skipped
    /// playout entry never needs it, and making it would cost the splice its time).
    private var encoderDrained = false
    private var framesThisCall = 0
    /// With renditions after the clock: the pictures the encoder holds, for its packets to carry
    /// (nil without renditions: no picture is kept).
    private var awaiting: PicturesAwaitingEncode<VideoFrame>?
    /// Of those, the ones let go unmatched so far, as counted in the push's figures.
    private var unmatchedCounted = 0

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions, stages: FrameStages) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "video stream \(stream.index)")
        }
        self.stream = stream
        self.options = options
        self.stages = stages
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase, threads: Self.decoderThreads(for: stream))
        settings = try VideoEncoderSettings(stream: stream, options: options)
        encoder = try VideoEncoder(settings: settings)
        scaler = try FrameScaler(width: settings.width, height: settings.height)
        monitor = PerformanceMonitor(targetFPS: settings.frameRate)
        if options.keepsPicturesForRenditions { awaiting = PicturesAwaitingEncode() }
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
        VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height, frameRate: settings.frameRate,
                       bitrate: settings.initialBitrate, decoderConfiguration: encoder.decoderConfiguration)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        let started = monotonicMicroseconds()
        framesThisCall = 0
        try decoder.send(packet)
        while try decoder.receive() { try handle(decoder.frame, into: &out) }
        measure(since: started)
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        let started = monotonicMicroseconds()
        framesThisCall = 0
        try decoder.send(nil)
        while try decoder.receive() { try handle(decoder.frame, into: &out) }
        measure(since: started)
        try finishEncoder(into: &out)
    }

    func reset() throws(LivePushError) {
        encoderDrained = false
        decoder.flush()
        lastDecoded = nil
        nextOutputTime = nil
        try restartEncoder()
    }

    /// Encoders cannot restart their timeline; a fresh one is cheap, keeps the same SPS/PPS and
    /// starts on a keyframe. It continues at the rate adaptive bitrate had reached: a loop or a
    /// switch is not a network change.
    private func restartEncoder() throws(LivePushError) {
        forgetAwaitingPictures()
        let bitrate = encoder.bitrate
        encoder = try VideoEncoder(settings: settings)
        encoder.setBitrate(bitrate)
    }

    func suspend(into out: inout [MediaPacket]) throws(LivePushError) {
        // The encoder's frame threads hold the last frames taken: they belong before the switch.
        try finishEncoder(into: &out)
        encoderDrained = true
    }

    func setBitrate(_ bitsPerSecond: Int) {
        encoder.setBitrate(bitsPerSecond)
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
        guard !times.isEmpty else { return }
        guard var frame = try filterable(decoded, at: time) else { return }
        if !announcedToStages {
            announcedToStages = true
            stages.videoEncoderStarted(settings, adaptive: options.adaptiveBitrate)
        }
        stages.process(&frame, frameRate: settings.frameRate)
        for t in times {
            let asked = keyframeAt.map { t >= $0 } ?? false
            if asked { keyframeAt = nil }
            try encode(frame, at: t, keyframe: forceKeyframe || asked, into: &out)
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

    /// The decoded picture as a ``VideoFrame`` in I420 or NV12 (converted when needed).
    private func filterable(_ decoded: UnsafeMutablePointer<AVFrame>, at time: Int64) throws(LivePushError) -> VideoFrame? {
        if let frame = try VideoFrame(referencing: decoded, timestamp: time) { return frame }
        if converter == nil {
            converter = try FrameScaler(width: Int(decoded.pointee.width) & ~1, height: Int(decoded.pointee.height) & ~1)
        }
        guard let converter else { return nil }
        return try VideoFrame(referencing: converter.scale(decoded), timestamp: time)
    }

    private func encode(_ frame: VideoFrame, at time: Int64, keyframe: Bool, into out: inout [MediaPacket]) throws(LivePushError) {
        if encoderDrained {
            try restartEncoder()
            encoderDrained = false
        }
        var picture = frame.storage.frame
        let scaled = !scaler.fits(picture)
        if scaled { picture = try scaler.scale(picture) }
        let firstNew = out.count
        try awaiting?.keep(frame, scaled: scaled ? picture : nil, at: time)
        try encoder.encode(picture, timestamp: time, keyframe: keyframe, into: &out)
        attachPictures(to: &out, from: firstNew)
        framesThisCall += 1
    }

    /// What the encoder still holds, each packet with its picture; none waits after it.
    private func finishEncoder(into out: inout [MediaPacket]) throws(LivePushError) {
        let firstNew = out.count
        try encoder.finish(into: &out)
        attachPictures(to: &out, from: firstNew)
        forgetAwaitingPictures()
    }

    private func countUnmatched() {
        guard let unmatched = awaiting?.unmatched, unmatched > unmatchedCounted else { return }
        let more = unmatched - unmatchedCounted
        stages.figures.update { $0.picturesUnmatched += more }
        unmatchedCounted = unmatched
    }

    /// Hands the packets the encoder returned (from `first` on) the pictures they were encoded from.
    private func attachPictures(to out: inout [MediaPacket], from first: Int) {
        awaiting?.attach(to: &out, from: first)
        countUnmatched()
    }

    /// The encoder is replaced or drained: pictures still waiting will never come out; they
    /// are counted (``PipelineStats/picturesUnmatched``).
    private func forgetAwaitingPictures() {
        awaiting?.discardAll()
        countUnmatched()
    }

    private func measure(since started: Int64) {
        guard framesThisCall > 0 else { return }
        let frames = framesThisCall
        let slow = monitor.record(frames: frames, busy: monotonicMicroseconds() - started)
        let filtered = !stages.filters.isEmpty
        stages.figures.update {
            $0.encoderCapacityFPS = monitor.capacityFPS
            $0.longestSlowWindowRun = monitor.longestSlowRun
            if filtered { $0.filteredFrames += frames }
            if slow { $0.lowPerformanceEpisodes += 1 }
        }
        if slow {
            let detail = "the pipeline manages \(Int(monitor.capacityFPS)) of \(Int(settings.frameRate.rounded())) fps"
            stages.reportEvent(.sdkError(LivePushError(.lowPerformance, detail)))
        }
    }
}
