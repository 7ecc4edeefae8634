import Synchronization

/// The overlay stage of one push: after the filters, on every picture the push encodes, it draws
/// the overlays of its ``OverlaySet``. The thin driver around that value: it renders what a
/// change needs when the change is sent (a text through FreeType, an image read and scaled, on
/// the caller's thread), queues the change, applies it at the next picture the producer draws,
/// and tells the caller where it landed (``OverlayReceipt``).
///
/// Per picture it only blends: each overlay's rendering is converted once to premultiplied
/// Y/U/V rows for the picture's format and the overlay's opacity (``WatermarkFilter/Overlay``),
/// kept until one of them changes, and blended with integer math over the overlay's rectangle
/// only. A fade converts it again at most 64 times (the opacity is kept in 64 steps); a clock
/// renders its text again when the text changes (once a second). A push without overlays pays
/// one uncontended lock per picture.
final class OverlayStage: Sendable {
    /// Changes waiting for a picture, at most: a push that draws none (paused, a copied stream)
    /// refuses more rather than queue them without end.
    static let maxPending = 64
    /// Renderings of schedule entries' overlays kept, at most (a schedule naming more distinct
    /// overlays is refused).
    static let maxEntryRenderings = 256
    /// The renderings kept (live and entries' together) take at most this many bytes of RGBA:
    /// sixteen full-frame 1080p graphics.
    static let maxRenderedBytes = 128 << 20

    private struct Blend {
        var key: String
        var overlay: WatermarkFilter.Overlay
    }

    private struct State {
        var set = OverlaySet()
        var pending: [(change: OverlayChange, receipt: OverlayReceipt)] = []
        /// The next entry's overlays, from the next picture on.
        var entryPending: [Overlay]?
        /// Renderings by ``Overlay/renderKey``: the live overlays', and the schedule's (rendered
        /// when the schedule or a clip was given, so the producer never reads a file).
        var liveImages: [String: RGBAImage] = [:]
        var entryImages: [String: RGBAImage] = [:]
        /// A clock's text and its rendering, by item.
        var clocks: [String: (text: String, image: RGBAImage)] = [:]
        /// Each drawn item's conversion for the picture format and opacity it was made for.
        var blends: [String: Blend] = [:]
        /// The presentation time of the last picture drawn.
        var lastTime: Int64?
        /// Wall-clock µs since 1970 at output time 0: what a wall clock overlay shows.
        var wallOrigin: Int64 = 0
    }
    private let state = Mutex(State())

    /// The live overlays as requested (the latest accepted change of each).
    var requested: [Overlay] { state.withLock { $0.set.requested } }

    /// The push's output time 0 fell at this wall-clock time (µs since 1970), read once when
    /// the producer starts: a wall clock overlay shows it plus the picture's media time.
    /// A new push's output time starts at 0 again: the overlays still shown start over there.
    func pushStarted(wallOrigin microseconds: Int64) {
        state.withLock { state in
            state.wallOrigin = microseconds
            state.lastTime = nil
            state.set.restart()
        }
    }

    // MARK: Changes (any thread)

    /// Checks and renders a change, and queues it for the next picture. Throws `overlayInvalid`,
    /// `overlayNotFound`, `imageOpenFailed` or `fontUnavailable`, and changes nothing then.
    func submit(_ change: OverlayChange) throws(LivePushError) -> OverlayReceipt {
        var rendered: (key: String, image: RGBAImage)?
        switch change {
        case .add(let overlay), .update(let overlay):
            try overlay.validate()
            if let image = try Self.render(overlay) { rendered = (overlay.renderKey, image) }
        case .remove:
            break
        }
        return try state.withLock { (state) throws(LivePushError) -> OverlayReceipt in
            guard state.pending.count < Self.maxPending else {
                throw LivePushError(.overlayInvalid, "\(Self.maxPending) changes wait for a picture already (is the push paused, or its video copied?)")
            }
            if let rendered { try Self.checkBudget(adding: rendered.image, state) }
            try state.set.accept(change)
            if let rendered { state.liveImages[rendered.key] = rendered.image }
            let receipt = OverlayReceipt()
            state.pending.append((change, receipt))
            return receipt
        }
    }

    /// Renders the overlays of schedule entries ahead (the schedule, a clip sent to the channel).
    /// Throws like ``submit(_:)``, or `overlayInvalid` past ``maxEntryRenderings``.
    func prepareEntryOverlays(_ overlays: [Overlay]) throws(LivePushError) {
        for overlay in overlays {
            try overlay.validate()
            let key = overlay.renderKey
            if state.withLock({ $0.entryImages[key] != nil }) { continue }
            guard let image = try Self.render(overlay) else { continue }
            try state.withLock { (state) throws(LivePushError) in
                guard state.entryImages.count < Self.maxEntryRenderings else {
                    throw LivePushError(.overlayInvalid, "the schedule names more than \(Self.maxEntryRenderings) different overlays")
                }
                try Self.checkBudget(adding: image, state)
                state.entryImages[key] = image
            }
        }
    }

    /// The playout entry that goes on air next brings these overlays (the producer, when it
    /// takes the entry's input): from its first picture on, until the next entry's.
    func enterEntry(_ overlays: [Overlay]) {
        state.withLock { state in
            // Nothing shown and nothing to show: stay idle.
            if overlays.isEmpty && !state.set.items.contains(where: { $0.scope == .entry }) && state.entryPending == nil { return }
            state.entryPending = overlays
        }
    }

    // MARK: Pictures (the producer)

    /// Applies the changes that arrived and draws what is visible at the picture's time
    /// (`frame.timestamp`, output time).
    func draw(on frame: inout VideoFrame, frameRate: Double) {
        let time = frame.timestamp
        let landed = state.withLock { state -> [(OverlayReceipt, OverlayApplied)] in
            defer { state.lastTime = time }
            guard !state.set.isEmpty || !state.pending.isEmpty || state.entryPending != nil else { return [] }
            if let entry = state.entryPending {
                state.set.enterEntry(entry, at: time)
                state.entryPending = nil
            }
            var landed: [(OverlayReceipt, OverlayApplied)] = []
            if !state.pending.isEmpty {
                let frameNumber = frameRate > 0 ? Int((Double(time) * frameRate / 1_000_000).rounded()) : 0
                for (change, receipt) in state.pending {
                    state.set.apply(change, at: time)
                    landed.append((receipt, OverlayApplied(id: change.id, mediaTime: .microseconds(time), frame: frameNumber,
                                                           after: state.lastTime.map { .microseconds($0) })))
                }
                state.pending.removeAll()
                Self.forgetUnused(&state)
            }
            for (item, alpha) in state.set.visible(at: time) {
                Self.blend(item, alpha: alpha, on: &frame, at: time, &state)
            }
            return landed
        }
        for (receipt, applied) in landed { receipt.fulfil(applied) }
    }

    /// Blends one overlay, converting its rendering first when the picture format, the
    /// rendering or the opacity step changed.
    private static func blend(_ item: OverlaySet.Item, alpha: Int, on frame: inout VideoFrame, at time: Int64, _ state: inout State) {
        let overlay = item.overlay
        let itemKey = "\(item.scope)|\(overlay.id)"
        let image: RGBAImage
        var renderKey = overlay.renderKey
        if case .clock(let style) = overlay.content {
            let text = clockText(style, at: time, wallOrigin: state.wallOrigin)
            if state.clocks[itemKey]?.text != text {
                let size = overlay.size ?? Overlay.defaultTextSize
                guard let drawn = try? TextRasterizer.render(text, size: size, color: overlay.color, background: overlay.background) else { return }
                state.clocks[itemKey] = (text, drawn)
            }
            guard let clock = state.clocks[itemKey] else { return }
            image = clock.image
            renderKey += "|" + clock.text
        } else {
            let images = item.scope == .live ? state.liveImages : state.entryImages
            guard let rendered = images[renderKey] else { return }
            image = rendered
        }
        let step = min(64, (alpha + 2) / 4)
        guard step > 0 else { return }
        let key = "\(renderKey)|\(overlay.x)|\(overlay.y)|\(step)"
        if state.blends[itemKey]?.key != key || state.blends[itemKey]?.overlay.matches(frame) != true {
            let converted = WatermarkFilter.Overlay(image: image, opacity: Double(step) / 64, origin: (overlay.x & ~1, overlay.y & ~1),
                                                    width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat)
            state.blends[itemKey] = Blend(key: key, overlay: converted)
        }
        guard let blend = state.blends[itemKey], !blend.overlay.isEmpty else { return }
        // Only a shared frame's copy can fail (out of memory): the picture goes on without it.
        try? blend.overlay.apply(to: &frame)
    }

    /// Refuses a rendering that would take the kept ones past ``maxRenderedBytes``.
    private static func checkBudget(adding image: RGBAImage, _ state: State) throws(LivePushError) {
        let kept = (state.liveImages.values.map(\.pixels.count) + state.entryImages.values.map(\.pixels.count)).reduce(0, +)
        guard kept + image.pixels.count <= maxRenderedBytes else {
            throw LivePushError(.overlayInvalid, "the overlays' pictures would take more than \(maxRenderedBytes >> 20) MiB (\(kept >> 20) MiB kept)")
        }
    }

    /// Drops the renderings and conversions no overlay uses any more.
    private static func forgetUnused(_ state: inout State) {
        let items = state.set.items
        let liveKeys = Set(state.set.requested.map(\.renderKey) + items.filter { $0.scope == .live }.map(\.overlay.renderKey))
        state.liveImages = state.liveImages.filter { liveKeys.contains($0.key) }
        let itemKeys = Set(items.map { "\($0.scope)|\($0.overlay.id)" })
        state.blends = state.blends.filter { itemKeys.contains($0.key) }
        state.clocks = state.clocks.filter { itemKeys.contains($0.key) }
    }

    /// `HH:MM:SS` of the picture at `time`: the media time, or the time of day (UTC) it airs.
    static func clockText(_ style: Overlay.ClockStyle, at time: Int64, wallOrigin: Int64) -> String {
        let micros = style == .media ? max(0, time) : wallOrigin + time
        let seconds = Int(micros / 1_000_000)
        let day = style == .media ? seconds : ((seconds % 86_400) + 86_400) % 86_400
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(day / 3600)):\(two(day / 60 % 60)):\(two(day % 60))"
    }

    // MARK: Rendering (the caller's thread)

    /// The picture of a text or an image overlay (nil: a clock, rendered as it runs).
    static func render(_ overlay: Overlay) throws(LivePushError) -> RGBAImage? {
        switch overlay.content {
        case .text(let text):
            return try TextRasterizer.render(text, size: overlay.size ?? Overlay.defaultTextSize,
                                             color: overlay.color, background: overlay.background)
        case .image(let path):
            let image = try ImageLoader.loadRGBA(path: path)
            let scaled = overlay.size.map { scale(image, toHeight: $0) } ?? image
            guard scaled.width <= Overlay.maxImageSide, scaled.height <= Overlay.maxImageSide else {
                throw LivePushError(.overlayInvalid, "overlay \"\(overlay.id)\", field \"image\": \(scaled.width)x\(scaled.height) is larger than \(Overlay.maxImageSide) pixels a side (give a smaller size)")
            }
            return scaled
        case .clock:
            // A clock needs the font: a missing one fails the change, not each picture.
            _ = try FontFace.shared.get()
            return nil
        }
    }

    /// `image` at `height` pixels, its aspect kept (nearest sample: a logo is scaled once).
    static func scale(_ image: RGBAImage, toHeight height: Int) -> RGBAImage {
        guard height != image.height else { return image }
        let width = max(1, min(Overlay.maxImageSide + 1, (image.width * height + image.height / 2) / image.height))
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let sy = min(image.height - 1, y * image.height / height)
            for x in 0..<width {
                let sx = min(image.width - 1, x * image.width / width)
                for c in 0..<4 { pixels[(y * width + x) * 4 + c] = image.pixels[(sy * image.width + sx) * 4 + c] }
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }
}
