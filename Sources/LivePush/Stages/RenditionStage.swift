/// After the clock: the video of outputs that asked for their own size or bitrate
/// (``PushConfig/outputVideo``). Each distinct rendition scales and encodes the push's pictures
/// once and shares the result with every output that asked for it. The pictures come with the
/// packets when the input encoded them itself (``MediaPacket/picture``): an encode is never
/// decoded again. Otherwise (a copied stream) the push's video, already stamped on the output
/// clock, is decoded once here (``RenditionPictureSource`` decides which, packet by packet). Outputs that asked for nothing take
/// the push's video as it is (stream copy, or the input's encode): the shortcut edge.
///
/// Input switches (loops, the pause image, playout entries, breaks) happen before the clock,
/// so the stage only ever sees one continuous stream: a new codec configuration reopens the
/// decoder, never an encoder. Owned by the producer; only its figures are read elsewhere.
final class RenditionStage {
    /// Where a rendition's packets go: an output, and which variant of its ladder they are.
    struct Target: Sendable, Equatable {
        var output: Int
        var variant: UInt8
    }

    /// One rendition, its encoder and the outputs it feeds.
    struct Branch {
        let rendition: VideoRendition
        let encoder: VideoFrameEncoder
        let targets: [Target]
        /// The outputs it feeds.
        var outputs: [Int] { targets.map(\.output) }
        /// Adaptive bitrate for this rendition (nil when the push does not adapt).
        var bitrate: AdaptiveBitrate?
        /// Its outputs that report a poor network: it steps down while any does.
        var poorOutputs: Set<Int> = []
        /// A peer of one of its outputs lost pictures (WebRTC's PLI/FIR): the next is a keyframe.
        var keyframeOwed = false
    }

    private(set) var branches: [Branch]
    /// Outputs that take the push's own video (with or without renditions of their own).
    let directOutputs: [Int]
    /// Outputs that take the push's video as variant 0 besides their renditions (variants 1...):
    /// alternatives in a preference list's codecs (``GraphPlan/withPushVideo``).
    let withPushVideo: Set<Int>
    /// Outputs whose variants are alternatives, not a ladder (``GraphPlan/alternatives``).
    let alternatives: Set<Int>
    /// Decodes the packets that came without a picture; opened at the first one, so a push
    /// whose pictures all come from its input never opens one (its threads and frame pool).
    private var decoder: VideoPacketDecoder?
    /// The configuration the push's video was last sent with: what the decoder opens with.
    private var configuration: [UInt8]
    private let codec: VideoCodec
    private var pictureSource = RenditionPictureSource()
    private var pictures: [VideoFrame] = []
    private var encoded: [MediaPacket] = []
    /// What the stage counted, for ``PushStats`` (read from any thread).
    let figures: RenditionFigures

    /// A ladder's variants have their keyframes at the same pictures: fixed GOPs without
    /// scene-cut keyframes, and a keyframe wherever the push's video has one (a splice, a
    /// switch), so that an HLS output cuts every variant at the same times.
    let alignsKeyframes: Bool

    /// Opens one encoder per distinct rendition. `renditions`: each output's ladder (one for
    /// most). `source` is the push's video as the clock sends it; `options` gives the encoders
    /// their GOP, preset and adaptive-bitrate range.
    init(renditions: [Int: [VideoRendition]], outputCount: Int, source: VideoTrackInfo,
         options: MediaSourceOptions, alternatives: Set<Int> = [], withPushVideo: Set<Int> = []) throws(LivePushError) {
        for id in renditions.keys where !(0..<outputCount).contains(id) {
            throw LivePushError(.outputSettingsInvalid, "no output \(id): the push has \(outputCount) (ids 0...\(outputCount - 1))")
        }
        for (id, ladder) in renditions where ladder.count > Int(UInt8.max) {
            throw LivePushError(.outputSettingsInvalid, "output \(id) has \(ladder.count) renditions; a ladder has at most 255")
        }
        // Alternatives are sent one at a time: nothing to align.
        alignsKeyframes = renditions.contains { $0.value.count > 1 && !alternatives.contains($0.key) }
        var branches: [Branch] = []
        let order = { (r: VideoRendition) in (r.width, r.height, r.bitrateKbps, r.constrainedBaseline ? 0 : 1) }
        for rendition in Set(renditions.values.joined()).sorted(by: { order($0) > order($1) }) {
            try rendition.validate()
            var encoding = options
            encoding.outputSize = VideoSize(width: rendition.width, height: rendition.height)
            encoding.videoBitrateKbps = rendition.bitrateKbps
            encoding.initialVideoBitrateKbps = nil
            encoding.minVideoBitrateKbps = nil
            encoding.frameRate = nil
            var settings = try VideoEncoderSettings(width: source.width, height: source.height,
                                                    frameRate: source.frameRate, options: encoding)
            settings.codec = rendition.codec
            settings.constrainedBaseline = rendition.constrainedBaseline
            // Slice threads, as ffmpeg's zerolatency: the input's own encoder already overlaps
            // the producer with its frame threads, and frame threads here would hold a second
            // frame set per rendition (renditions benchmark: 105 against 107-109 MiB peak).
            settings.sliceThreads = true
            settings.fixedGOP = alignsKeyframes
            let targets = renditions.sorted { $0.key < $1.key }.compactMap { id, ladder in
                ladder.firstIndex(of: rendition).map { Target(output: id, variant: UInt8($0 + (withPushVideo.contains(id) ? 1 : 0))) }
            }
            let adaptive = options.adaptiveBitrate
                ? AdaptiveBitrate(target: settings.targetBitrate, minimum: settings.minBitrate, initial: settings.initialBitrate)
                : nil
            branches.append(Branch(rendition: rendition, encoder: try VideoFrameEncoder(settings: settings),
                                   targets: targets, bitrate: adaptive))
        }
        self.branches = branches
        directOutputs = (0..<outputCount).filter { renditions[$0]?.isEmpty ?? true || withPushVideo.contains($0) }
        self.withPushVideo = withPushVideo
        self.alternatives = alternatives
        codec = source.codec
        configuration = source.decoderConfiguration
        figures = RenditionFigures(branches.map { ($0.rendition, $0.outputs, $0.encoder.bitrate) })
    }

    /// The video track output `id` announces: its rendition's (its ladder's first), or nil for
    /// the push's own.
    func trackInfo(forOutput id: Int) -> VideoTrackInfo? {
        ladder(forOutput: id).first
    }

    /// Every variant's video track of output `id`, in its ladder's order; empty for an output
    /// that takes the push's own video.
    func ladder(forOutput id: Int) -> [VideoTrackInfo] {
        branches.compactMap { branch in branch.targets.first { $0.output == id }.map { ($0.variant, branch.encoder.trackInfo) } }
            .sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Takes one packet of the push's video (a frame or a new configuration) and hands each
    /// rendition's packets to `send`, with the outputs they go to.
    func process(_ packet: MediaPacket, send: (MediaPacket, [Target]) -> Void) throws(LivePushError) {
        pictures.removeAll(keepingCapacity: true)
        if packet.isSequenceHeader {
            guard packet.data != configuration else { return }
            // What the old configuration still holds is encoded before the new one opens.
            try closeDecoder(due: packet.due, send: send)
            configuration = packet.data
            return
        }
        switch pictureSource.next(hasPicture: packet.picture != nil, isKeyframe: packet.isKeyframe) {
        case .takePicture(let drainDecoderFirst):
            if drainDecoderFirst {
                try closeDecoder(due: packet.due, send: send)
                pictures.removeAll(keepingCapacity: true)
            }
            guard var picture = packet.picture else { return }
            // Encoded at its time on the output clock, as a decoded picture would be.
            picture.timestamp = packet.pts
            pictures.append(picture)
            try encodePictures(due: packet.due, send: send, decoded: false, keyframe: alignsKeyframes && packet.isKeyframe)
        case .decode:
            if decoder == nil { decoder = try VideoPacketDecoder(configuration: configuration, codec: codec) }
            try decoder?.decode(packet, into: &pictures)
            try encodePictures(due: packet.due, send: send)
        case .skip:
            figures.counts.withLock { $0.skipped += 1 }
        }
    }

    /// The end of the push's video: what the decoder and the encoders still hold.
    func finish(send: (MediaPacket, [Target]) -> Void) throws(LivePushError) {
        pictures.removeAll(keepingCapacity: true)
        try closeDecoder(due: .min, send: send)
        for branch in branches {
            encoded.removeAll(keepingCapacity: true)
            try branch.encoder.finish(into: &encoded)
            for packet in encoded { send(packet, branch.targets) }
        }
    }

    /// Encodes what the decoder still holds, and closes it: the next packet without a picture
    /// opens a new one, which starts from a keyframe.
    private func closeDecoder(due: Int64, send: (MediaPacket, [Target]) -> Void) throws(LivePushError) {
        if let decoder {
            try decoder.drain(into: &pictures)
            try encodePictures(due: due, send: send)
        }
        decoder = nil
        pictureSource.decoderReopened()
    }

    /// Encodes `pictures` for every rendition; `decoded` says where they came from (figures);
    /// `keyframe`: the first is one in every rendition (a ladder's alignment).
    private func encodePictures(due: Int64, send: (MediaPacket, [Target]) -> Void, decoded: Bool = true,
                                keyframe: Bool = false) throws(LivePushError) {
        guard !pictures.isEmpty else { return }
        for (index, branch) in branches.enumerated() {
            encoded.removeAll(keepingCapacity: true)
            for (position, picture) in pictures.enumerated() {
                let key = branches[index].keyframeOwed || (keyframe && position == 0)
                try branch.encoder.encode(picture, keyframe: key, into: &encoded)
                branches[index].keyframeOwed = false
            }
            for var packet in encoded {
                packet.due = due
                send(packet, branch.targets)
            }
            figures.counts.withLock { $0.encoded[index] += pictures.count }
        }
        let count = pictures.count
        figures.counts.withLock { counts in
            if decoded { counts.decoded += count } else { counts.fromInput += count }
        }
    }

    /// A peer of output `id` lost pictures: its rendition's next picture is a keyframe. False
    /// when the output takes the push's own video (the input is asked instead).
    func requestKeyframe(forOutput id: Int) -> Bool {
        guard let index = branches.firstIndex(where: { $0.outputs.contains(id) }) else { return false }
        // A ladder's variants keep their keyframes together: all of them, or none.
        for other in branches.indices where other == index || alignsKeyframes { branches[other].keyframeOwed = true }
        return true
    }

    // MARK: - Adaptive bitrate

    /// An output's network changed: its rendition steps down while any of its outputs is
    /// poor, and back up once all of them recovered (it follows its slowest output).
    func networkChanged(output id: Int, isPoor: Bool, now: Int64) {
        guard let index = branches.firstIndex(where: { $0.outputs.contains(id) }), var control = branches[index].bitrate else { return }
        let next: Int?
        if isPoor {
            branches[index].poorOutputs.insert(id)
            next = control.networkPoor(now: now)
        } else {
            branches[index].poorOutputs.remove(id)
            next = branches[index].poorOutputs.isEmpty ? control.networkRecovered(now: now) : nil
        }
        branches[index].bitrate = control
        if let next { setBitrate(next, of: index) }
    }

    /// The passing of time: renditions keep stepping while their condition lasts.
    func tick(now: Int64) {
        for index in branches.indices {
            guard var control = branches[index].bitrate else { continue }
            if let next = control.tick(now: now) { setBitrate(next, of: index) }
            branches[index].bitrate = control
        }
    }

    /// Takes effect at the encoder's next frame; counted when decided.
    private func setBitrate(_ bitsPerSecond: Int, of index: Int) {
        branches[index].encoder.setBitrate(bitsPerSecond)
        figures.counts.withLock { $0.bitrate[index] = bitsPerSecond }
    }
}
