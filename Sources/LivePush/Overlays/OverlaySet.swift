/// The overlays of one push as a value: which are requested, which are on screen at a picture's
/// time, and how opaque each is then (its fades). Pure: ``OverlayStage`` drives it with the
/// changes it was sent and the presentation times of the pictures it draws on, so each decision
/// is unit-tested without pictures (`OverlaySetTests`).
///
/// Two scopes: the live overlays (the app's and the control API's changes) and the overlays of
/// the playout entry on air, replaced as a whole when the next entry starts. A live overlay and
/// an entry overlay may share an id: the API only ever names the live ones.
struct OverlaySet: Equatable {
    enum Scope: Equatable { case live, entry }

    /// An overlay on screen (or fading out), from `since` (µs, output time).
    struct Item: Equatable {
        var overlay: Overlay
        var scope: Scope
        /// The first picture it was drawn on (its fade-in starts here).
        var since: Int64
        /// Removed at this time: it fades out, then goes.
        var leaving: Int64?
    }

    /// The live overlays as the app sees them: every accepted change, applied to a picture or not yet.
    private(set) var requested: [Overlay] = []
    /// Drawn in this order (entry overlays first, then live ones in the order they were added).
    private(set) var items: [Item] = []

    var isEmpty: Bool { items.isEmpty }

    // MARK: The app's view (when a change is sent)

    /// Checks a change against the overlays requested so far and records it. Throws
    /// `overlayInvalid` (a bad overlay, an id in use, one overlay too many) or `overlayNotFound`,
    /// and changes nothing then.
    mutating func accept(_ change: OverlayChange) throws(LivePushError) {
        switch change {
        case .add(let overlay):
            try overlay.validate()
            guard !requested.contains(where: { $0.id == overlay.id }) else {
                throw LivePushError(.overlayInvalid, "overlay \"\(overlay.id)\" exists: change it with an update (PATCH)")
            }
            guard requested.count < Overlay.maxLive else {
                throw LivePushError(.overlayInvalid, "the push has \(Overlay.maxLive) overlays, the most it may have")
            }
            requested.append(overlay)
        case .update(let overlay):
            try overlay.validate()
            guard let index = requested.firstIndex(where: { $0.id == overlay.id }) else { throw Self.notFound(overlay.id) }
            requested[index] = overlay
        case .remove(let id):
            guard let index = requested.firstIndex(where: { $0.id == id }) else { throw Self.notFound(id) }
            requested.remove(at: index)
        }
    }

    static func notFound(_ id: String) -> LivePushError {
        LivePushError(.overlayNotFound, "no overlay \"\(id.prefix(Overlay.maxIDLength))\"")
    }

    // MARK: On the pictures

    /// A new push (output time from 0 again): what is shown stays, without a fade; what was
    /// fading out and the previous entry's overlays go.
    mutating func restart() {
        items.removeAll { $0.leaving != nil || $0.scope == .entry }
        for index in items.indices { items[index].since = Int64.min / 2 }
    }

    /// Applies an accepted change from the picture at `time` (µs) on.
    mutating func apply(_ change: OverlayChange, at time: Int64) {
        switch change {
        case .add(let overlay):
            // An overlay of that id still fading out goes at once.
            items.removeAll { $0.scope == .live && $0.overlay.id == overlay.id }
            items.append(Item(overlay: overlay, scope: .live, since: time))
        case .update(let overlay):
            guard let index = items.firstIndex(where: { $0.scope == .live && $0.overlay.id == overlay.id && $0.leaving == nil }) else {
                items.append(Item(overlay: overlay, scope: .live, since: time))
                return
            }
            items[index].overlay = overlay
        case .remove(let id):
            guard let index = items.firstIndex(where: { $0.scope == .live && $0.overlay.id == id && $0.leaving == nil }) else { return }
            items[index].leaving = time
        }
        dropGone(at: time)
    }

    /// The playout entry starting at `time` brings its overlays; the previous entry's go at once
    /// (a fade-out would run into the next entry).
    mutating func enterEntry(_ overlays: [Overlay], at time: Int64) {
        items.removeAll { $0.scope == .entry }
        let entry = overlays.prefix(Overlay.maxPerEntry).map { Item(overlay: $0, scope: .entry, since: time) }
        items.insert(contentsOf: entry, at: 0)
    }

    /// What is drawn on the picture at `time`, in order, with each overlay's opacity in 1/256
    /// (0 is not drawn). Overlays whose fade-out ended are forgotten.
    mutating func visible(at time: Int64) -> [(item: Item, alpha: Int)] {
        dropGone(at: time)
        return items.compactMap { item in
            let alpha = Self.alpha(of: item, at: time)
            return alpha > 0 ? (item, alpha) : nil
        }
    }

    /// The opacity of `item` at `time`, 0...256: its opacity times its fade-in and fade-out.
    static func alpha(of item: Item, at time: Int64) -> Int {
        let overlay = item.overlay
        var level = overlay.opacity
        let fadeIn = overlay.fadeInMicroseconds
        if fadeIn > 0 { level *= min(1, max(0, Double(time - item.since) / Double(fadeIn))) }
        if let leaving = item.leaving {
            let fadeOut = overlay.fadeOutMicroseconds
            level *= fadeOut > 0 ? min(1, max(0, 1 - Double(time - leaving) / Double(fadeOut))) : 0
        }
        return Int((level * 256).rounded())
    }

    private mutating func dropGone(at time: Int64) {
        items.removeAll { item in
            guard let leaving = item.leaving else { return false }
            return time >= leaving + item.overlay.fadeOutMicroseconds
        }
    }
}
