/// One compressed access unit ready for FLV packaging.
///
/// Video data is AVCC (4-byte length-prefixed NAL units); audio data is a raw AAC frame
/// (no ADTS header). Timestamps are in microseconds on the source's timeline; the pusher
/// re-stamps them onto its one monotonic output clock.
public struct MediaPacket: Sendable {
    /// What a packet carries.
    public enum Kind: Sendable, Equatable {
        /// A coded video frame.
        case video
        /// A coded audio frame.
        case audio
        /// A timed data message (an AMF0 body, e.g. a cue), sent as an RTMP/FLV script message.
        case data
        /// A cue read from the input: an SCTE-35 splice_info_section (its bytes), stamped with
        /// where it arrived on the input's timeline. Never sent as it is: the push reads it
        /// (``SourceCue``) and passes it on re-stamped.
        case cue
    }

    /// How much a video frame matters to the frames after it; drives the send-queue drop policy.
    public enum Importance: Int, Sendable, Comparable {
        /// Nothing references it (B-frames, audio is never dropped by importance).
        case disposable = 0
        /// Referenced by later frames of its GOP (P-frames).
        case reference = 1
        /// Starts a GOP (IDR keyframe).
        case key = 2

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// What the packet carries.
    public var kind: Kind
    /// The coded bytes.
    public var data: [UInt8]
    /// Decode timestamp, microseconds.
    public var dts: Int64
    /// Presentation timestamp, microseconds (>= dts for B-frame streams).
    public var pts: Int64
    /// Duration, microseconds (0 when unknown).
    public var duration: Int64
    /// How much later frames depend on this one.
    public var importance: Importance
    /// A new codec configuration for the frames that follow (an input switch changed it):
    /// `data` is the AVCDecoderConfigurationRecord or the AudioSpecificConfig, sent as an FLV
    /// sequence header. Queues never drop one.
    public var isSequenceHeader: Bool
    /// Which variant of its output's ladder a rendition's video packet is (0: the first, or the
    /// only one; ``PushConfig/outputVideoLadders``), set per output when it is handed over. A
    /// byte in the padding after ``isSequenceHeader``: the packet is copied into every output's
    /// queue, so it must not grow (``MediaPacketLayoutTests``).
    var variant: UInt8 = 0
    /// When the push's clock made it due (monotonic µs), for a real-time push; `.min` otherwise.
    /// An output measures how late it wrote the packet against it.
    var due: Int64 = .min
    /// The raw picture or sound the packet carries, boxed (``RawMedia``): nil for almost every
    /// packet.
    private var raw: RawMedia?
    /// The picture this packet was encoded from (after the input's filters and scale), when the
    /// push has renditions and its input encodes: the renditions after the clock encode it
    /// rather than decode the packet (``RenditionStage``). A side channel would have to match
    /// packets to pictures a second time, across the switcher and the clock; riding on the
    /// packet it follows every re-stamp for free. It never reaches an output's queue or the
    /// recording (`PushEngine.deliver` strips it): a 720p picture is 1.4 MB, a queue holds 2 s.
    var picture: VideoFrame? {
        get { raw?.picture }
        set { raw = .holding(picture: newValue, sound: raw?.sound, isShownAsIs: isShownAsIs) }
    }
    /// A raw picture that skips the push's detector and filters (a slate shows what it was given).
    var isShownAsIs: Bool {
        get { raw?.isShownAsIs ?? false }
        set { raw = .holding(picture: raw?.picture, sound: raw?.sound, isShownAsIs: newValue) }
    }
    /// The samples of raw sound (``rawSound(_:)``), for the push's sound encode after the clock.
    var sound: AudioFrame? {
        get { raw?.sound }
        set { raw = .holding(picture: raw?.picture, sound: newValue, isShownAsIs: isShownAsIs) }
    }
    /// Drops the raw media (what an output's queue and the recording must not hold).
    mutating func dropRawMedia() { raw = nil }

    /// True for a keyframe.
    public var isKeyframe: Bool { importance == .key }

    /// Creates a packet.
    public init(kind: Kind, data: [UInt8], dts: Int64, pts: Int64, duration: Int64 = 0, importance: Importance) {
        self.kind = kind
        self.data = data
        self.dts = dts
        self.pts = pts
        self.duration = duration
        self.importance = importance
        isSequenceHeader = false
    }

    /// A sequence header carrying `configuration`, due at `time`.
    public static func sequenceHeader(_ kind: Kind, configuration: [UInt8], at time: Int64) -> MediaPacket {
        var packet = MediaPacket(kind: kind, data: configuration, dts: time, pts: time, importance: .key)
        packet.isSequenceHeader = true
        return packet
    }

    /// A picture for the push's video encode after the clock (``VideoEncodeStage``): a video
    /// packet with no coded bytes. An input that makes or decodes pictures yields these, so
    /// that one encode, after the clock, serves every input; `keyframe`: the encode starts a
    /// GOP with it (an input's first, one asked for), and the switcher may start a segment on it.
    /// `duration`: how long it shows (µs), where the clock puts the end of the pictures.
    static func rawPicture(_ picture: VideoFrame, duration: Int64, keyframe: Bool, shownAsIs: Bool = false) -> MediaPacket {
        var packet = MediaPacket(kind: .video, data: [], dts: picture.timestamp, pts: picture.timestamp, duration: duration,
                                 importance: keyframe ? .key : .reference)
        packet.raw = RawMedia(picture: picture, sound: nil, isShownAsIs: shownAsIs)
        return packet
    }

    /// A raw picture (``rawPicture(_:duration:keyframe:shownAsIs:)``), not yet encoded.
    var isRawPicture: Bool { kind == .video && data.isEmpty && raw?.picture != nil }

    /// Sound for the push's AAC encode after the clock (``AudioEncodeStage``): an audio packet
    /// with no coded bytes, stamped at its first sample (dts = pts), as long as its samples.
    /// An input that decodes or makes sound yields these, so that one encode, after the clock,
    /// serves every input and mixes the push's music once.
    static func rawSound(_ sound: AudioFrame) -> MediaPacket {
        var packet = MediaPacket(kind: .audio, data: [], dts: sound.timestamp, pts: sound.timestamp, duration: sound.duration,
                                 importance: .key)
        packet.raw = RawMedia(picture: nil, sound: sound, isShownAsIs: false)
        return packet
    }

    /// Raw sound (``rawSound(_:)``), not yet encoded.
    var isRawSound: Bool { kind == .audio && data.isEmpty && raw?.sound != nil }

    /// A video frame (not a sequence header).
    var isVideoFrame: Bool { kind == .video && !isSequenceHeader }

    /// Sequence headers, data messages and cues: tiny, and what follows needs them.
    var isNeverDropped: Bool { isSequenceHeader || kind == .data || kind == .cue }

    /// A SCTE-35 splice_info_section (its bytes) due at output time `time`, for an output that
    /// carries cues in the stream itself (MPEG-TS over SRT).
    public static func spliceSection(_ section: [UInt8], at time: Int64) -> MediaPacket {
        MediaPacket(kind: .cue, data: section, dts: time, pts: time, importance: .key)
    }

    /// A data message (AMF0 `body`) due at output time `time`.
    public static func dataMessage(_ body: [UInt8], at time: Int64) -> MediaPacket {
        MediaPacket(kind: .data, data: body, dts: time, pts: time, importance: .key)
    }
}
