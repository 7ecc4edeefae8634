import CFFmpeg
import DequeModule

/// An input fed by the app: raw ``VideoFrame``s and ``AudioFrame``s, encoded to H.264 and AAC
/// on the push's producer thread. Hand it to ``LivePusher/start(source:url:)``, then call
/// `send` from any thread as frames arrive, and ``finish()`` at the end.
///
/// ```swift
/// let input = try FrameInput(video: .init(width: 1280, height: 720, frameRate: 30),
///                            audio: .init(sampleRate: 48_000, channels: 2))
/// try pusher.start(source: input, url: url)
/// try input.send(frame)          // VideoFrame (I420 or NV12, any size: scaled to the format)
/// try input.send(samples)        // AudioFrame (planar float at the format's rate and channels)
/// input.finish()
/// ```
///
/// Timestamps are the frames' own (``Timestamps/fromFrames``, µs) or stamped when `send` is
/// called (``Timestamps/onArrival``). Each track holds at most about two seconds of frames:
/// `send` waits while its track is full (the push is behind), so memory stays bounded.
/// Frames go to the encoders as they are: filters, the detector and the BGM mixer apply to
/// file inputs today.
public final class FrameInput: MediaSource, @unchecked Sendable {
    public struct VideoFormat: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var frameRate: Double
        public init(width: Int, height: Int, frameRate: Double) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
        }
    }

    public struct AudioFormat: Sendable, Equatable {
        public var sampleRate: Int
        public var channels: Int
        public init(sampleRate: Int, channels: Int) {
            self.sampleRate = sampleRate
            self.channels = channels
        }
    }

    public enum Timestamps: Sendable, Equatable {
        /// The frames' `timestamp` (µs); they must not go backwards within a track.
        case fromFrames
        /// The time `send` was called, from the first frame of either track.
        case onArrival
    }

    public var info: StreamInfo { encoder.info }
    private let timestamps: Timestamps
    private let encoder: RawFrameEncoder
    private let lock = ConditionLock()
    private let maxVideoFrames: Int
    private let maxAudioSamples: Int

    // Guarded by `lock`.
    private var videoFrames: Deque<VideoFrame> = []
    private var audioFrames: Deque<AudioFrame> = []
    private var queuedSamples = 0
    private var finished = false
    private var firstArrival: Int64?

    public init(video: VideoFormat?, audio: AudioFormat?, options: MediaSourceOptions = MediaSourceOptions(),
                timestamps: Timestamps = .fromFrames) throws(LivePushError) {
        self.timestamps = timestamps
        encoder = try RawFrameEncoder(video: video, audio: audio, options: options)
        maxVideoFrames = encoder.info.video.map { max(2, Int($0.frameRate * 2)) } ?? 0
        maxAudioSamples = (audio?.sampleRate ?? 0) * 2
    }

    // MARK: - The app's side

    /// Queues a picture; waits while two seconds of video are queued. Throws `invalidState`
    /// after ``finish()`` or without a video track.
    public func send(_ frame: VideoFrame) throws(LivePushError) {
        guard encoder.videoEncoder != nil else { throw LivePushError(.invalidState, "this frame input has no video track") }
        var frame = frame
        let queued = lock.withLock {
            while videoFrames.count >= maxVideoFrames && !finished { lock.wait() }
            guard !finished else { return false }
            if timestamps == .onArrival { frame.timestamp = arrivalTime() }
            videoFrames.append(frame)
            lock.broadcast()
            return true
        }
        guard queued else { throw LivePushError(.invalidState, "the frame input has finished") }
    }

    /// Queues audio; waits while two seconds of samples are queued. The frame must be at the
    /// input's sample rate and channel count (`unsupportedCodec` otherwise).
    public func send(_ frame: AudioFrame) throws(LivePushError) {
        guard let format = encoder.audioEncoder?.format else { throw LivePushError(.invalidState, "this frame input has no audio track") }
        guard frame.sampleRate == format.sampleRate, frame.channels == format.channels else {
            throw LivePushError(.unsupportedCodec, "audio frame of \(frame.channels) ch at \(frame.sampleRate) Hz; the input takes \(format)")
        }
        var frame = frame
        let queued = lock.withLock {
            while queuedSamples >= maxAudioSamples && !finished { lock.wait() }
            guard !finished else { return false }
            if timestamps == .onArrival { frame.timestamp = arrivalTime() }
            audioFrames.append(frame)
            queuedSamples += frame.sampleCount
            lock.broadcast()
            return true
        }
        guard queued else { throw LivePushError(.invalidState, "the frame input has finished") }
    }

    /// The end of the input: what is queued is still pushed, then the push ends.
    public func finish() {
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }

    /// Called with the lock held.
    private func arrivalTime() -> Int64 {
        let now = monotonicMicroseconds()
        let first = firstArrival ?? now
        firstArrival = first
        return now - first
    }

    // MARK: - MediaSource (the producer thread)

    public func nextPacket() throws(LivePushError) -> MediaPacket? {
        try encoder.nextPacket(taking: takeNextFrame)
    }

    public func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "frames handed in by the app cannot be looped")
    }

    /// The queued frame with the earliest timestamp, once every track has one (or has ended).
    private func takeNextFrame() -> RawFrameEncoder.Next {
        lock.withLock {
            let hasVideo = encoder.videoEncoder != nil, hasAudio = encoder.audioEncoder != nil
            while !finished && ((hasVideo && videoFrames.isEmpty) || (hasAudio && audioFrames.isEmpty)) {
                lock.wait()
            }
            defer { lock.broadcast() }  // an app waiting for room
            switch (videoFrames.first, audioFrames.first) {
            case let (v?, a?):
                if v.timestamp <= a.timestamp { return .video(videoFrames.removeFirst()) }
                queuedSamples -= a.sampleCount
                return .audio(audioFrames.removeFirst())
            case (.some, nil): return .video(videoFrames.removeFirst())
            case (nil, let a?):
                queuedSamples -= a.sampleCount
                return .audio(audioFrames.removeFirst())
            case (nil, nil): return .end
            }
        }
    }
}
