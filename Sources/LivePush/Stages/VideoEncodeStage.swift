/// After the clock: the push's one video encode. Inputs that make or decode pictures (a still,
/// the app's frames, a live feed's slots) yield them raw (``MediaPacket/isRawPicture``), stamped
/// on the output clock like any packet; here they go through the push's raw-frame stages (the
/// detector, the filters), are scaled to the push's size and encoded once, with the push's
/// settings and its adaptive bitrate. The coded packets go on to delivery (the renditions, the
/// outputs, the recording), each with the picture it was encoded from when the push has
/// renditions, so a rendition never decodes this encode.
///
/// Copied packets (stream copy: the shortcut edge) and sequence headers pass through; what the
/// encoder holds goes out before them (the frames of the input going off air belong before
/// the switch), and the next picture after them starts on a keyframe, in a fresh encoder.
/// Inputs mark the pictures that must be keyframes (their first, the first after a switch
/// back, one asked for) with ``MediaPacket/Importance/key``, which the switcher also waits for
/// at a segment's start.
///
/// Its configuration (``decoderConfiguration``) is learnt when the push starts if the push's
/// input yields pictures (outputs announce it), else when the first pictures come: a copied
/// push that may show a slate or a fill opens no libx264 until it does (a copy push's peak
/// memory). The switcher sends ``decoderConfiguration`` as the sequence header when pictures
/// follow a copied stream; before it is known that header comes empty, and is filled here.
/// Owned by the producer; only its figures (``FrameStages/figures``) are read elsewhere.
final class VideoEncodeStage {
    let settings: VideoEncoderSettings
    /// What outputs announce for this encode (its SPS/PPS): fresh encoders keep it. Empty
    /// until the first encoder opens (at the start when the push's input yields pictures).
    private(set) var decoderConfiguration: [UInt8] = []
    private let stages: FrameStages
    /// The push's own encode (its input yields pictures): it starts adaptive bitrate.
    private let startsAdaptiveBitrate: Bool
    private let keepsPictures: Bool
    /// Nil until a picture comes, and after a drain: a push whose pictures never come (a slate
    /// never shown) holds no encoder; one that stays open between inputs keeps its bitrate.
    private var encoder: VideoFrameEncoder?
    /// Pictures went in since the last drain: the encoder may hold some.
    private var holdsPictures = false
    /// The next picture is a keyframe (the first, the first after a copied packet or header).
    private var keyframeOwed = true
    /// Output times (µs, ascending) where a picture must be a keyframe: the splices of cues
    /// passed on (``requestKeyframe(atOrAfter:)``). At most ``keyframeRequestsKept``.
    private var keyframesAt: [Int64] = []
    static let keyframeRequestsKept = 16
    /// The bitrate adaptive bitrate last set, for encoders opened after a drain.
    private var bitrate: Int
    private var announcedToStages = false
    private var monitor: PerformanceMonitor
    /// The push's clock, for how long a picture took (the low-performance warning).
    private let clock: any MonotonicClock
    private var encoded: [MediaPacket] = []

    /// `settings`: the push's encode (the first input's declared pictures); `main`: the push's
    /// input itself yields pictures (adaptive bitrate follows this encode from its first one).
    init(settings: VideoEncoderSettings, stages: FrameStages, main: Bool, adaptive: Bool,
         keepsPictures: Bool, clock: any MonotonicClock = SystemMonotonicClock()) throws(LivePushError) {
        self.settings = settings
        self.clock = clock
        self.stages = stages
        self.keepsPictures = keepsPictures
        startsAdaptiveBitrate = main && adaptive
        bitrate = settings.initialBitrate
        monitor = PerformanceMonitor(targetFPS: settings.frameRate)
        // The outputs announce this encode's configuration when the input on air has pictures.
        if main { _ = try openEncoder() }
    }

    /// The track outputs announce when the push's input yields pictures.
    var trackInfo: VideoTrackInfo {
        VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height, frameRate: settings.frameRate,
                       bitrate: settings.initialBitrate, decoderConfiguration: decoderConfiguration)
    }

    /// Takes one packet of the push's video, stamped on the output clock, and hands on what
    /// delivery takes: the encode of a raw picture, or a copied packet or header (after what
    /// the encoder held).
    func process(_ packet: MediaPacket, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        guard packet.isRawPicture, var picture = packet.picture else {
            if holdsPictures { try drain(due: packet.due, send: send) }
            keyframeOwed = true
            var passed = packet
            // The switcher's header for pictures to come, sent before the configuration was
            // known: it is this encode's, opened now for them.
            if packet.isSequenceHeader && packet.data.isEmpty { passed.data = try openEncoder().trackInfo.decoderConfiguration }
            try send(passed)
            return
        }
        let started = clock.now().microseconds
        if !announcedToStages {
            announcedToStages = true
            if startsAdaptiveBitrate { stages.videoEncoderStarted(settings, adaptive: true) }
        }
        // Encoded at its time on the output clock.
        picture.timestamp = packet.pts
        let filtered = !packet.isShownAsIs && stages.hasFilters
        if !packet.isShownAsIs { stages.process(&picture, frameRate: settings.frameRate) }
        // After the filters, on every picture the push encodes (a slate too: a channel's logo stays).
        stages.overlays.draw(on: &picture, frameRate: settings.frameRate)
        let encoder = try openEncoder()
        encoded.removeAll(keepingCapacity: true)
        try encoder.encode(picture, keyframe: keyframeOwed || packet.isKeyframe || keysSplice(at: packet), into: &encoded)
        keyframeOwed = false
        holdsPictures = true
        // The encode's own time: what the renditions and delivery take after it is not its capacity.
        measure(since: started, filtered: filtered)
        for var coded in encoded {
            coded.due = packet.due
            try send(coded)
        }
    }

    /// A splice at output time `time` (a cue passed on): the first picture shown at or after it
    /// (within half a frame) is a keyframe, so that an HLS segment, or a player's join, can
    /// start there. A request far behind the pictures already encoded is dropped.
    func requestKeyframe(atOrAfter time: Int64) {
        guard keyframesAt.count < Self.keyframeRequestsKept, !keyframesAt.contains(time) else { return }
        keyframesAt.append(time)
        keyframesAt.sort()
    }

    /// Whether `packet`'s picture is the first at or after a requested splice; the requests it
    /// answers are done.
    private func keysSplice(at packet: MediaPacket) -> Bool {
        guard let first = keyframesAt.first, packet.pts + packet.duration / 2 >= first else { return false }
        keyframesAt.removeAll { packet.pts + packet.duration / 2 >= $0 }
        return true
    }

    /// The end of the push's video: what the encoder still holds.
    func finish(send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        if holdsPictures { try drain(due: .min, send: send) }
    }

    /// The bitrate of the encoder now open (nil: none is).
    var openEncoderBitrate: Int? { encoder?.bitrate }

    /// Adaptive bitrate: from the next picture on (an encoder opened later starts at it).
    func setBitrate(_ bitsPerSecond: Int) {
        bitrate = bitsPerSecond
        encoder?.setBitrate(bitsPerSecond)
    }

    /// The encoder, opened at the bitrate adaptive bitrate reached (a switch is not a network change).
    private func openEncoder() throws(LivePushError) -> VideoFrameEncoder {
        if let encoder { return encoder }
        let opened = try VideoFrameEncoder(settings: settings, keepsPictures: keepsPictures)
        opened.setBitrate(bitrate)
        if decoderConfiguration.isEmpty { decoderConfiguration = opened.trackInfo.decoderConfiguration }
        encoder = opened
        return opened
    }

    /// What the encoder holds goes out; a drained encoder cannot go on, the next picture opens one.
    private func drain(due: Int64, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        holdsPictures = false
        guard let encoder else { return }
        self.encoder = nil
        encoded.removeAll(keepingCapacity: true)
        try encoder.finish(into: &encoded)
        countUnmatched(encoder)
        for var coded in encoded {
            coded.due = due
            try send(coded)
        }
        encoded.removeAll(keepingCapacity: true)
    }

    private func countUnmatched(_ encoder: VideoFrameEncoder) {
        let unmatched = encoder.picturesUnmatched
        if unmatched > 0 { stages.figures.update { $0.picturesUnmatched += unmatched } }
    }

    /// The encode's capacity, for the low-performance warning: filters, scale and encode of
    /// each picture, measured here where they run.
    private func measure(since started: Int64, filtered: Bool) {
        let slow = monitor.record(frames: 1, busy: clock.now().microseconds - started)
        let capacity = monitor.capacityFPS, longest = monitor.longestSlowRun
        stages.figures.update {
            $0.encoderCapacityFPS = capacity
            $0.longestSlowWindowRun = longest
            if filtered { $0.filteredFrames += 1 }
            if slow { $0.lowPerformanceEpisodes += 1 }
        }
        if slow {
            let detail = "the pipeline manages \(Int(capacity)) of \(Int(settings.frameRate.rounded())) fps"
            stages.reportEvent(.sdkError(LivePushError(.lowPerformance, detail)))
        }
    }
}
