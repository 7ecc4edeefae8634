/// What a media source will produce: the tracks, their codec configuration and the duration.
public struct StreamInfo: Sendable, Equatable {
    /// The video track, if any.
    public var video: VideoTrackInfo?
    /// The audio track, if any.
    public var audio: AudioTrackInfo?
    /// Total duration in microseconds, 0 when unknown (live sources).
    public var duration: Int64
    /// An output with a ladder (``PushConfig/outputVideoLadders``): every variant's video, in
    /// order (``video`` is the first); empty otherwise.
    var variants: [VideoTrackInfo] = []
    /// Not empty: the ``variants`` (or the one ``video``) are alternatives of one video in these
    /// codecs, in order of preference (``PushConfig/videoCodecPreference``), of which an RTMP
    /// output sends the first its server confirms (``RTMPTrackPlan``); not a ladder.
    var codecPreference: [VideoCodec] = []

    /// Creates a description of a source's tracks.
    public init(video: VideoTrackInfo?, audio: AudioTrackInfo?, duration: Int64) {
        self.video = video
        self.audio = audio
        self.duration = duration
    }
}

extension StreamInfo {
    /// Takes the codec configuration a sequence-header packet carries (an input switch changed
    /// it): the header of a later connection must be the one the next frames need.
    mutating func adopt(sequenceHeader packet: MediaPacket) {
        switch packet.kind {
        case .video: video?.decoderConfiguration = packet.data
        case .audio: audio?.audioSpecificConfig = packet.data
        case .data, .cue: break
        }
    }
}

/// A video track as it will be sent.
public struct VideoTrackInfo: Sendable, Equatable {
    /// The codec.
    public var codec: VideoCodec
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frames per second (0 when unknown).
    public var frameRate: Double
    /// Bits per second (0 when unknown).
    public var bitrate: Int
    /// The codec's configuration record: AVCDecoderConfigurationRecord (avcC), hvcC, av1C or
    /// vpcC (the FLV sequence header's body). Empty for an input that yields pictures
    /// (``FrameInput``, ``StillInput``): the push encodes them after its clock, and that
    /// encode's configuration is what its outputs announce.
    public var decoderConfiguration: [UInt8]
    /// The track is raw pictures (``MediaPacket/rawPicture(_:duration:keyframe:shownAsIs:)``), for the
    /// push's encode after the clock (``VideoEncodeStage``): what it would be encoded with when
    /// the push starts on it. Its `decoderConfiguration` is then empty: the push's encode has it.
    var pictureSettings: VideoEncoderSettings?

    /// Creates a video track description.
    public init(codec: VideoCodec = .h264, width: Int, height: Int, frameRate: Double, bitrate: Int, decoderConfiguration: [UInt8]) {
        self.codec = codec
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitrate = bitrate
        self.decoderConfiguration = decoderConfiguration
    }
}

/// An audio track as it will be sent: AAC, or Opus where an output carries it (``AudioCodec``).
public struct AudioTrackInfo: Sendable, Equatable {
    /// Samples per second.
    public var sampleRate: Int
    /// Number of channels.
    public var channels: Int
    /// Bits per second (0 when unknown).
    public var bitrate: Int
    /// AudioSpecificConfig (the FLV AAC sequence header body); for an Opus track, the AAC
    /// configuration the Opus was made from.
    public var audioSpecificConfig: [UInt8]
    /// The codec (AAC unless the push's Opus encode makes the track: WHIP outputs, and RTMP outputs with `--audio-codec opus`).
    public internal(set) var codec: AudioCodec = .aac
    /// An Opus track's identification header (`OpusHead`, RFC 7845): what Enhanced RTMP's
    /// `SequenceStart` carries. Empty for AAC.
    var opusHead: [UInt8] = []
    /// The track is raw sound (``MediaPacket/rawSound(_:)``), for the push's AAC encode after
    /// the clock: the rate and channels are the samples', and `audioSpecificConfig` the one an
    /// encode of them would have.
    var yieldsRawSound = false

    /// Creates an audio track description.
    public init(sampleRate: Int, channels: Int, bitrate: Int, audioSpecificConfig: [UInt8]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitrate = bitrate
        self.audioSpecificConfig = audioSpecificConfig
    }

    /// The track of an input that yields raw sound in `format`, announced with the
    /// AudioSpecificConfig the push's AAC encode of it will have; nil for a format AAC-LC
    /// cannot carry (more than two channels, a rate it has no index for).
    static func rawSound(_ format: AudioFormat, bitrate: Int) -> AudioTrackInfo? {
        guard (1...2).contains(format.channels),
              let config = AACLowComplexityConfig.audioSpecificConfig(sampleRate: format.sampleRate, channels: format.channels) else {
            return nil
        }
        var track = AudioTrackInfo(sampleRate: format.sampleRate, channels: format.channels, bitrate: bitrate,
                                   audioSpecificConfig: config)
        track.yieldsRawSound = true
        return track
    }
}

/// An input: what the push reads its compressed packets from (a file, a clip, a live feed,
/// frames or packets from the app, a still).
///
/// A source is used from one thread at a time; it is not shared.
public protocol MediaInput: AnyObject {
    /// The tracks the source produces.
    var info: StreamInfo { get }
    /// The next packet in decode order, or nil at the end of the media.
    func nextPacket() throws(LivePushError) -> MediaPacket?
    /// Go back to the start, for looping. Timestamps restart at the source's origin.
    func rewind() throws(LivePushError)
    /// Where the media starts on the source's own timeline, when the source knows it before
    /// handing out packets (see `OutputClock`); nil: its first packet says.
    var start: MediaStart? { get }
    /// Another input goes on air: returns every packet made from what the source already
    /// took (queued packets, frames inside its encoders), so they are sent before the switch.
    /// When it is on air again, its next video frame is a keyframe; a source that cannot do
    /// that (stream copy) is resumed at its next keyframe.
    func suspend() throws(LivePushError) -> [MediaPacket]
    /// Adaptive bitrate: the video encoder's bitrate from its next frame (bit/s), when the
    /// source encodes.
    func setVideoBitrate(_ bitsPerSecond: Int)
    /// The first picture at or after `time` (the source's own timeline, µs) should be a
    /// keyframe, when the source encodes: where a break ends, so the input comes back there.
    func requestKeyframe(atOrAfter time: Int64)
    /// True when reading never waits for data to arrive (a regular file, a still image): such
    /// a real-time push runs on the shared `PacingScheduler` instead of a thread of its own.
    /// A pipe, standard input or frames handed in by an app can wait for as long as their
    /// writer takes.
    var readsWithoutWaiting: Bool { get }
    /// Ends a wait for data in ``nextPacket()``: the push stopped. The source then reports its
    /// end. The push calls it from another thread, and only on an input that says it may be
    /// called so: an ``InterruptibleInput``. (Standard input cannot be interrupted: its producer
    /// thread ends when the writer closes the pipe.)
    func interrupt()
}

extension MediaInput {
    public var readsWithoutWaiting: Bool { false }
    public func interrupt() {}
    public var start: MediaStart? { nil }
    public func suspend() throws(LivePushError) -> [MediaPacket] { [] }
    public func setVideoBitrate(_ bitsPerSecond: Int) {}
    public func requestKeyframe(atOrAfter time: Int64) {}
}
