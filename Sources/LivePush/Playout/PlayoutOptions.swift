/// The channel's format and how entries are turned into media.
public struct PlayoutOptions: Sendable, Equatable {
    /// Encode mode (the default): every entry is decoded and encoded at this size, frame rate
    /// and sample rate, so splices are frame-exact and the codec configuration never changes.
    public var width = 1280
    /// Output height in pixels.
    public var height = 720
    /// Output frames per second.
    public var frameRate = 25.0
    /// Output audio samples per second.
    public var sampleRate = 44_100
    /// Copy mode: entries are sent as they are (H.264/AAC; other codecs are encoded); cuts fall
    /// on keyframes and a new sequence header goes out when a clip's configuration differs.
    public var copy = false
    /// The image that stands in for a failed entry (with silence); nil: black.
    public var slateImage: String?
    /// Bitrates, GOP, preset of the encoders.
    public var media = MediaSourceOptions()

    /// Creates the default options.
    public init() {}
}
