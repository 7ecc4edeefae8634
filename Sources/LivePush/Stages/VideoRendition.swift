/// What one output asks of the video: its own size and bitrate, encoded after the clock from
/// the push's one decode (``PushConfig/outputVideo``). Outputs that ask for the same rendition
/// share one encode; outputs that ask for none carry the push's own video (stream copy, or
/// the input's encode).
public struct VideoRendition: Sendable, Hashable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Target bitrate, kbit/s.
    public var bitrateKbps: Int
    /// What it is encoded to: H.264 unless said (HEVC and AV1 need Enhanced RTMP or SRT).
    public var codec: VideoCodec
    /// H.264 Constrained Baseline: set by the push for a WHIP output (``GraphPlan``), not by
    /// the app. A rendition that differs only in this is encoded apart.
    var constrainedBaseline = false

    /// Creates a rendition.
    public init(width: Int, height: Int, bitrateKbps: Int, codec: VideoCodec = .h264) {
        self.width = width
        self.height = height
        self.bitrateKbps = bitrateKbps
        self.codec = codec
    }

    /// An H.264 rendition, Constrained Baseline or not.
    init(width: Int, height: Int, bitrateKbps: Int, constrainedBaseline: Bool) {
        self.init(width: width, height: height, bitrateKbps: bitrateKbps)
        self.constrainedBaseline = constrainedBaseline
    }

    /// Parses `WxH@KBPS[/CODEC]`, as in `640x360@800` or `1280x720@2500/hevc`.
    public init(parsing text: String) throws(LivePushError) {
        let (main, codecName) = text.firstIndex(of: "/").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, "h264")
        let parts = main.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let size = VideoSize(String(parts[0])), let kbps = Int(parts[1]),
              let codec = VideoCodec(rawValue: codecName.lowercased()), codec != .vp9 else {
            throw LivePushError(.outputSettingsInvalid,
                                "video rendition \"\(TerminalText.escape(text))\" is not WxH@KBPS[/h264|hevc|av1], as in 640x360@800 or 1280x720@2500/hevc")
        }
        self.init(width: size.width, height: size.height, bitrateKbps: kbps, codec: codec)
        try validate()
    }

    /// Throws `outputSettingsInvalid` for a size or bitrate out of range.
    public func validate() throws(LivePushError) {
        guard (16...8192).contains(width), (16...8192).contains(height) else {
            throw LivePushError(.outputSettingsInvalid, "video size \(width)x\(height) is outside 16x16...8192x8192")
        }
        guard (50...100_000).contains(bitrateKbps) else {
            throw LivePushError(.outputSettingsInvalid, "video bitrate \(bitrateKbps) kbit/s is outside 50...100000")
        }
    }

    public var description: String {
        "\(width)x\(height)@\(bitrateKbps)" + (codec == .h264 ? "" : "/\(codec.rawValue)") + (constrainedBaseline ? " constrained baseline" : "")
    }

    /// Parses the CLI's `ID=WxH@KBPS` (`1=320x180@300`): the output's id and its rendition.
    public static func parseAssignment(_ text: String) throws(LivePushError) -> (output: Int, rendition: VideoRendition) {
        guard let equals = text.firstIndex(of: "="), let id = Int(text[..<equals]), id >= 0 else {
            throw LivePushError(.outputSettingsInvalid, "\"\(TerminalText.escape(text))\" is not ID=WxH@KBPS, as in 1=320x180@300 (ID: the output's position, 0 for the first URL)")
        }
        return (id, try VideoRendition(parsing: String(text[text.index(after: equals)...])))
    }
}
