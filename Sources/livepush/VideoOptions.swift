import ArgumentParser
import FoundationEssentials
import LivePush

/// The raw-frame pipeline's options of `livepush push`: filters, encoder settings, pause image.
struct VideoOptions: ParsableArguments {
    @Option(name: .customLong("filter"), help: ArgumentHelp(
        "Add a video filter: beauty[=STRENGTH] (skin smoothing and whitening, strength 0-1, default 0.5). Repeatable.",
        valueName: "NAME[=VALUE]"))
    var filters: [FilterSpec] = []

    @Option(help: ArgumentHelp("Overlay a PNG (with alpha) in the top-right corner.", valueName: "PNG"))
    var watermark: String?

    @Option(name: .customLong("watermark-position"), help: "top-left, top-right, bottom-left, bottom-right or center.")
    var watermarkPosition: WatermarkPlacement = .topRight

    @Option(name: .customLong("overlay"), help: ArgumentHelp(
        "Draw a live overlay from the start: a JSON object as POST /overlays takes ({\"id\", \"text\"|\"image\"|\"clock\", \"x\", \"y\", \"size\", ...}; see docs/overlays.md). Repeatable.",
        valueName: "JSON"))
    var overlays: [String] = []

    @Option(name: .customLong("video-codec"), help: ArgumentHelp(
        "The codec the video goes out in: h264 (legacy RTMP, the default), hevc (libx265) or av1 (libsvtav1), both over Enhanced RTMP or SRT, or copy (H.264, HEVC, AV1 or VP9 sent as they are). A list in order of preference (hevc,h264): each RTMP output sends the first its server confirms (H.264 always counts), the source copied when its codec is in the list.",
        valueName: "h264|hevc|av1|copy|LIST"))
    var videoCodec: VideoCodecList?

    @Option(name: .customLong("video-size"), help: ArgumentHelp("Encoded picture size.", valueName: "WxH"))
    var videoSize: VideoSize?

    @Option(help: "Encoded frames per second (frames are dropped or repeated to fit).")
    var fps: Double?

    @Option(help: "Seconds between keyframes when encoding.")
    var gop: Double?

    @Option(help: "libx264 preset: ultrafast, superfast, veryfast, faster, fast, medium, ...")
    var preset: String?

    @Option(name: .customLong("target-bitrate"), help: "Video bitrate in kbit/s that adaptive bitrate returns to.")
    var targetBitrate: Int?

    @Option(name: .customLong("min-bitrate"), help: "Video bitrate in kbit/s adaptive bitrate never goes below.")
    var minBitrate: Int?

    @Flag(name: .customLong("no-adaptive-bitrate"), help: "Keep the video bitrate fixed when the network is poor.")
    var fixedBitrate = false

    @Option(name: .customLong("pause-image"), help: ArgumentHelp("Image pushed while paused (SIGUSR1 pauses and resumes).",
                                                            valueName: "IMAGE"))
    var pauseImage: String?

    func validate() throws {
        if let fps, !(1...240).contains(fps) { throw ValidationError("--fps must be between 1 and 240") }
        if let gop, gop <= 0 || gop > 60 { throw ValidationError("--gop must be between 0 and 60 seconds") }
        if let t = targetBitrate, t <= 0 { throw ValidationError("--target-bitrate must be positive") }
        if let m = minBitrate, m <= 0 { throw ValidationError("--min-bitrate must be positive") }
        if let t = targetBitrate, let m = minBitrate, m > t { throw ValidationError("--min-bitrate must not exceed --target-bitrate") }
        let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
        if let preset, !presets.contains(preset) { throw ValidationError("--preset must be one of \(presets.joined(separator: ", "))") }
    }

    /// Encoder settings mean nothing to a stream copy, so giving one asks for encoding. (Filters,
    /// a size, an fps or a pause image make the library encode by themselves.)
    var setsEncoder: Bool { gop != nil || preset != nil || targetBitrate != nil || minBitrate != nil || !overlays.isEmpty }

    func apply(to config: inout PushConfig) {
        if setsEncoder { config.media.encodeVideo = true }
        videoCodec?.apply(to: &config)
        if let videoSize { config.media.outputSize = videoSize }
        if let fps { config.media.frameRate = fps }
        if let gop { config.media.gopSeconds = gop }
        if let preset { config.media.preset = preset }
        if let targetBitrate { config.media.videoBitrateKbps = targetBitrate }
        if let minBitrate { config.media.minVideoBitrateKbps = minBitrate }
        config.media.adaptiveBitrate = !fixedBitrate
        config.pauseImage = pauseImage
    }

    /// The `--overlay` objects (image paths as given: the command line is the operator's own).
    func makeOverlays() throws(LivePushError) -> [Overlay] {
        var made: [Overlay] = []
        for json in overlays { made.append(try Overlay.decode(json: Data(json.utf8)) { $0 }) }
        return made
    }

    /// The filters to add, in order: the named ones, then the watermark on top.
    func makeFilters() throws(LivePushError) -> [any VideoFilter] {
        var made: [any VideoFilter] = filters.map { spec in BeautyFilter(strength: spec.strength) }
        if let watermark {
            made.append(try WatermarkFilter(path: watermark, position: watermarkPosition.position))
        }
        return made
    }
}

extension VideoCodecChoice: ExpressibleByArgument {
    public init?(argument: String) {
        guard let choice = VideoCodecChoice(argument), choice != .encode(.vp9) else { return nil }
        self = choice
    }
}

/// `--filter beauty` or `--filter beauty=0.7`.
struct FilterSpec: ExpressibleByArgument {
    let strength: Double

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.first == "beauty" else { return nil }
        if parts.count == 2 {
            guard let value = Double(parts[1]), (0...1).contains(value) else { return nil }
            strength = value
        } else {
            strength = 0.5
        }
    }
}

extension VideoSize: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

enum WatermarkPlacement: String, ExpressibleByArgument, CaseIterable {
    case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right", center

    var position: WatermarkFilter.Position {
        switch self {
        case .topLeft: .topLeft
        case .topRight: .topRight
        case .bottomLeft: .bottomLeft
        case .bottomRight: .bottomRight
        case .center: .center
        }
    }
}
