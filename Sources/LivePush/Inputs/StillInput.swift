/// An input that generates its media: a still image (any format libavcodec decodes, letterboxed
/// to the video format) at a low frame rate, and/or silence. A slate, a "be right back" card, a
/// test signal; `image: nil` is silence alone.
///
/// ```swift
/// let slate = try StillInput(image: "slate.png", video: .init(width: 1280, height: 720, frameRate: 5),
///                            audio: .init(sampleRate: 44_100, channels: 2), duration: .seconds(30))
/// try pusher.start(source: slate, url: url)
/// ```
/// It lasts `duration`, or until the push is stopped when that is nil. It cannot be rewound
/// (a nil duration is the loop).
public final class StillInput: MediaInput {
    /// The tracks the input produces.
    public var info: StreamInfo { frames.info }
    private let frames: RawFrameQueue
    private let picture: VideoFrame?
    private let frameDuration: Int64
    private let samplesPerFrame = 1024
    private let end: Int64?
    private var nextVideo: Int64 = 0
    private var nextAudioSample: Int64 = 0

    /// Creates a still picture (or black) and/or silence.
    public convenience init(image path: String?, video: FrameInput.VideoFormat, audio: FrameInput.AudioFormat?,
                            duration: Duration?, options: MediaSourceOptions = MediaSourceOptions()) throws(LivePushError) {
        try self.init(image: path, video: video, audio: audio, duration: duration, options: options, blackWithoutImage: false)
    }

    /// With `blackWithoutImage`, no image means a black picture rather than no video (a default
    /// slate). Its silence is raw sound: the push's encode after the clock mixes the BGM and
    /// effects into it (the pause image plays the music on).
    init(image path: String?, video: FrameInput.VideoFormat, audio: FrameInput.AudioFormat?,
         duration: Duration?, options: MediaSourceOptions, blackWithoutImage: Bool) throws(LivePushError) {
        let hasVideo = path != nil || blackWithoutImage
        frames = try RawFrameQueue(video: hasVideo ? video : nil, audio: audio, options: options, picturesShownAsIs: true)
        if hasVideo, let track = frames.info.video {
            if let path {
                picture = try ImageLoader.loadFrame(path: path, width: track.width, height: track.height)
            } else {
                picture = try VideoFrame(width: track.width, height: track.height)
            }
            frameDuration = MediaTime(seconds: 1 / track.frameRate).microseconds
        } else {
            picture = nil
            frameDuration = 0
        }
        end = duration.map { $0.nanoseconds / 1000 }
    }

    /// Made from one image (and a mixer that never waits).
    public var readsWithoutWaiting: Bool { true }

    public func nextPacket() throws(LivePushError) -> MediaPacket? {
        try frames.nextPacket(taking: generate)
    }

    /// The picture and the sound start at 0.
    public var start: MediaStart? { MediaStart(presentation: 0, decode: 0) }

    /// It holds nothing (the push's encodes after the clock drain themselves). Its pictures
    /// start on a keyframe when it is back on air.
    public func suspend() throws(LivePushError) -> [MediaPacket] {
        frames.forceKeyframe = true
        return []
    }

    public func requestKeyframe(atOrAfter time: Int64) {
        frames.requestKeyframe(atOrAfter: time)
    }

    public func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "a still input cannot be rewound; give it no duration to run until stopped")
    }

    /// The next frame in timestamp order: the picture again, or 1024 samples of silence.
    private func generate() throws(LivePushError) -> RawFrameQueue.Next {
        let audioFormat = frames.audioFormat
        // Both tracks end at `end`: pictures that start before it, sound frames mostly before it.
        let halfAudioFrame = audioFormat.map { $0.micros(ofSamples: Int64(samplesPerFrame)) / 2 } ?? 0
        let audioTime = audioFormat.map { $0.micros(ofSamples: nextAudioSample) }.flatMap { time in
            end.map { time + halfAudioFrame < $0 } ?? true ? time : nil
        }
        let videoTime = picture == nil ? nil : end.map { nextVideo < $0 } ?? true ? nextVideo : nil
        guard let time = [videoTime, audioTime].compactMap({ $0 }).min() else { return .end }
        if let picture, time == videoTime {
            var frame = picture  // shares the pixels: shown as it is, the encode only reads them
            frame.timestamp = time
            nextVideo += frameDuration
            return .video(frame)
        }
        guard let audioFormat else { return .end }
        let silence = try AudioFrame(sampleRate: audioFormat.sampleRate, channels: audioFormat.channels,
                                     sampleCount: samplesPerFrame, timestamp: time)
        nextAudioSample += Int64(samplesPerFrame)
        return .audio(silence)
    }
}
