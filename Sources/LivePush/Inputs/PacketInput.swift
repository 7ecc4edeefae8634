/// An input fed by the app with encoded media: H.264 access units and AAC frames, as a
/// hardware encoder, another library or a network client produces them. Nothing is decoded or
/// encoded; the packets are re-wrapped for FLV (Annex B → AVCC, ADTS headers stripped) on the
/// push's producer thread.
///
/// ```swift
/// let input = try PacketInput(video: .init(width: 1280, height: 720, frameRate: 30, parameterSets: spsPPS),
///                             audio: .init(sampleRate: 48_000, channels: 2))
/// try pusher.start(source: input, url: url)
/// try input.send(h264: accessUnit, pts: pts, dts: dts)   // µs; dts defaults to pts
/// try input.send(aac: frame, pts: pts)
/// input.finish()
/// ```
///
/// The codec configuration is given up front (the push announces it before the first frame):
/// SPS and PPS as Annex B NAL units or an AVCDecoderConfigurationRecord; for AAC an
/// AudioSpecificConfig, or AAC-LC built from the rate and channels. Keyframes are the access
/// units with an IDR slice; the stream is sent from the first one. Timestamps are the app's
/// (µs, decode order per track) or stamped on arrival (``FrameInput/Timestamps``). Each track
/// holds about two seconds: `send` waits while it is full.
public final class PacketInput: MediaInput, Sendable {
    /// An H.264 track's format and parameter sets.
    public struct H264Track: Sendable {
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// Frames per second.
        public var frameRate: Double
        /// SPS and PPS NAL units in Annex B form, or an AVCDecoderConfigurationRecord.
        public var parameterSets: [UInt8]
        /// Creates an H.264 track.
        public init(width: Int, height: Int, frameRate: Double, parameterSets: [UInt8]) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.parameterSets = parameterSets
        }
    }

    /// An AAC track's format.
    public struct AACTrack: Sendable {
        /// Samples per second.
        public var sampleRate: Int
        /// Number of channels.
        public var channels: Int
        /// Nil: AAC-LC at `sampleRate` and `channels`.
        public var audioSpecificConfig: [UInt8]?
        /// Creates an AAC track; without an AudioSpecificConfig, AAC-LC is assumed.
        public init(sampleRate: Int, channels: Int, audioSpecificConfig: [UInt8]? = nil) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.audioSpecificConfig = audioSpecificConfig
        }
    }

    /// One access unit or frame as handed in: payload and times (µs). The tracks are merged
    /// in decode order, so `timestamp` is the decode time.
    struct Item: AppFed {
        var data: [UInt8]
        var timestamp: Int64
        /// Presentation time minus decode time (> 0 for frames reordered by B-frames).
        var presentationOffset: Int64
    }

    /// The tracks the input produces.
    public let info: StreamInfo
    private let feed: AppFeedQueue<Item, Item>
    private let audioFrameDuration: Int64

    /// Creates an input with an H.264 track, an AAC track, or both.
    public init(video: H264Track?, audio: AACTrack?, timestamps: FrameInput.Timestamps = .fromFrames) throws(LivePushError) {
        guard video != nil || audio != nil else { throw LivePushError(.noUsableStream, "a packet input needs video or audio") }
        var videoTrack: VideoTrackInfo?
        if let video {
            let record = AVCCFormat.parseDecoderConfiguration(video.parameterSets) != nil
                ? video.parameterSets : AnnexBConverter.decoderConfigurationRecord(fromAnnexB: video.parameterSets)
            guard let record else {
                throw LivePushError(.noUsableStream, "the H.264 parameter sets hold no usable SPS and PPS")
            }
            videoTrack = VideoTrackInfo(width: video.width, height: video.height, frameRate: video.frameRate,
                                        bitrate: 0, decoderConfiguration: record)
        }
        var audioTrack: AudioTrackInfo?
        if let audio {
            guard let index = ADTSHeader.sampleRates.firstIndex(of: audio.sampleRate), (1...7).contains(audio.channels) else {
                throw LivePushError(.unsupportedCodec, "AAC of \(audio.channels) channels at \(audio.sampleRate) Hz")
            }
            let lowComplexity: [UInt8] = [UInt8(2 << 3 | index >> 1), UInt8((index & 1) << 7 | audio.channels << 3)]
            audioTrack = AudioTrackInfo(sampleRate: audio.sampleRate, channels: audio.channels, bitrate: 0,
                                        audioSpecificConfig: audio.audioSpecificConfig ?? lowComplexity)
        }
        info = StreamInfo(video: videoTrack, audio: audioTrack, duration: 0)
        audioFrameDuration = MediaTime(samples: 1024, rate: audio?.sampleRate ?? 44_100).microseconds
        let frameRate = video?.frameRate ?? 0
        feed = AppFeedQueue(hasVideo: video != nil, hasAudio: audio != nil, timestamps: timestamps,
                            maxVideo: Int(max(frameRate, 25) * 2), maxAudioCost: (audio?.sampleRate ?? 0) * 2 / 1024,
                            audioCost: { _ in 1 })
    }

    // MARK: - The app's side

    /// Queues one H.264 access unit (Annex B, or AVCC with 4-byte lengths) presented at `pts`
    /// and decoded at `dts` (µs; nil: `pts`, no B-frames). Waits while two seconds are queued.
    public func send(h264 accessUnit: [UInt8], pts: Int64, dts: Int64? = nil) throws(LivePushError) {
        guard !accessUnit.isEmpty else { throw LivePushError(.invalidState, "an empty access unit") }
        let decode = min(dts ?? pts, pts)
        try feed.send(video: Item(data: accessUnit, timestamp: decode, presentationOffset: pts - decode))
    }

    /// Queues one AAC frame (raw, or with its ADTS header) presented at `pts` (µs).
    public func send(aac frame: [UInt8], pts: Int64) throws(LivePushError) {
        guard !frame.isEmpty else { throw LivePushError(.invalidState, "an empty AAC frame") }
        try feed.send(audio: Item(data: frame, timestamp: pts, presentationOffset: 0))
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
        switch feed.take() {
        case .end: return nil
        case .video(let item): return try videoPacket(item)
        case .audio(let item): return audioPacket(item)
        }
    }

    public func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "packets handed in by the app cannot be looped")
    }

    private func videoPacket(_ item: Item) throws(LivePushError) -> MediaPacket {
        let (data, summary): ([UInt8], AnnexBConverter.FrameSummary?) = item.data.withUnsafeBufferPointer { bytes in
            if AnnexBConverter.startsWithStartCode(bytes) {
                let converted = AnnexBConverter.avcc(fromAnnexB: bytes, dropParameterSets: true)
                return (converted.data, converted.summary)
            }
            return (item.data, AVCCFormat.summarize(bytes, lengthSize: 4))
        }
        guard let summary, !data.isEmpty else {
            throw LivePushError(.mediaReadFailed, "an H.264 access unit that is neither Annex B nor AVCC")
        }
        let importance: MediaPacket.Importance = summary.hasIDR ? .key : summary.isReference ? .reference : .disposable
        let frameRate = info.video?.frameRate ?? 0
        return MediaPacket(kind: .video, data: data, dts: item.timestamp, pts: item.timestamp + item.presentationOffset,
                           duration: frameRate > 0 ? Int64(1_000_000 / frameRate) : 0, importance: importance)
    }

    private func audioPacket(_ item: Item) -> MediaPacket {
        var data = item.data
        if let header = ADTSHeader(data), header.frameLength <= data.count {
            data = Array(data[header.headerLength..<header.frameLength])
        }
        return MediaPacket(kind: .audio, data: data, dts: item.timestamp, pts: item.timestamp,
                           duration: audioFrameDuration, importance: .key)
    }
}
