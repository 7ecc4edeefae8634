import Synchronization

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
/// The pictures go through the push's detector and filters and its one video encode, after
/// the output clock (so its ``info`` has no codec configuration: the push's encode has it);
/// the sound likewise: the push mixes its background music and effects into it and encodes it
/// to AAC after the clock.
public final class FrameInput: MediaInput, Sendable {
    /// The video track's format.
    public struct VideoFormat: Sendable, Equatable {
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// Frames per second.
        public var frameRate: Double
        /// Creates a video format.
        public init(width: Int, height: Int, frameRate: Double) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
        }
    }

    /// The audio track's format.
    public struct AudioFormat: Sendable, Equatable {
        /// Samples per second.
        public var sampleRate: Int
        /// Number of channels.
        public var channels: Int
        /// Creates an audio format.
        public init(sampleRate: Int, channels: Int) {
            self.sampleRate = sampleRate
            self.channels = channels
        }
    }

    /// Where the frames' timestamps come from.
    public enum Timestamps: Sendable, Equatable {
        /// The frames' `timestamp` (µs); they must not go backwards within a track.
        case fromFrames
        /// The time `send` was called, from the first frame of either track.
        case onArrival
    }

    /// The tracks the input produces.
    public let info: StreamInfo
    /// The format audio frames must have (nil without an audio track).
    private let audioFormat: LivePush.AudioFormat?
    /// The producer's alone once the push runs (the app's threads touch only `feed`); in a
    /// `Mutex` so that the compiler checks it, never contended: an atomic exchange per packet.
    private let frames: Mutex<RawFrameQueue>
    private let feed: AppFeedQueue<VideoFrame, AudioFrame>

    /// Creates an input with a video track, an audio track, or both.
    public init(video: VideoFormat?, audio: AudioFormat?, options: MediaSourceOptions = MediaSourceOptions(),
                timestamps: Timestamps = .fromFrames) throws(LivePushError) {
        let frames = try RawFrameQueue(video: video, audio: audio, options: options)
        info = frames.info
        audioFormat = frames.audioFormat
        self.frames = Mutex(frames)
        feed = AppFeedQueue(hasVideo: video != nil, hasAudio: audio != nil, timestamps: timestamps,
                            maxVideo: info.video.map { Int($0.frameRate * 2) } ?? 0,
                            maxAudioCost: (audio?.sampleRate ?? 0) * 2, audioCost: { $0.sampleCount })
    }

    // MARK: - The app's side

    /// Queues a picture; waits while two seconds of video are queued. Throws `invalidState`
    /// after ``finish()`` or without a video track.
    public func send(_ frame: VideoFrame) throws(LivePushError) {
        try feed.send(video: frame)
    }

    /// Queues audio; waits while two seconds of samples are queued. The frame must be at the
    /// input's sample rate and channel count (`unsupportedCodec` otherwise).
    public func send(_ frame: AudioFrame) throws(LivePushError) {
        if let format = audioFormat, frame.sampleRate != format.sampleRate || frame.channels != format.channels {
            throw LivePushError(.unsupportedCodec, "audio frame of \(frame.channels) ch at \(frame.sampleRate) Hz; the input takes \(format)")
        }
        try feed.send(audio: frame)
    }

    /// The end of the input: what is queued is still pushed, then the push ends.
    public func finish() {
        feed.finish()
    }

    /// The push stopped: the producer stops waiting for frames (the app's `send` then fails).
    public func interrupt() {
        feed.finish()
    }

    // MARK: - MediaInput (the producer thread)

    public func nextPacket() throws(LivePushError) -> MediaPacket? {
        let feed = feed
        return try frames.withLock { frames throws(LivePushError) in
            try frames.nextPacket {
                switch feed.take() {
                case .video(let frame): .video(frame)
                case .audio(let frame): .audio(frame)
                case .end: .end
                }
            }
        }
    }

    /// The pause image goes on air: what is ready goes out first, and the app's pictures start
    /// on a keyframe when they are back. While it is off air the app's `send` waits for room,
    /// as it does when the push is slower than the app.
    public func suspend() throws(LivePushError) -> [MediaPacket] {
        frames.withLock { $0.suspend() }
    }

    public func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "frames handed in by the app cannot be looped")
    }

    public func requestKeyframe(atOrAfter time: Int64) {
        frames.withLock { $0.requestKeyframe(atOrAfter: time) }
    }
}
