/// Live overlays: texts, images and clocks drawn over the pictures the push encodes, added,
/// changed and removed while it runs (see ``Overlay``).
extension LivePusher {
    /// Sends one change of the live overlays and waits, at most `timeout`, for the first picture
    /// drawn with it. The change is checked and rendered (a text through FreeType, an image read
    /// from its file) before this returns or throws, and takes effect on the next picture the
    /// push encodes.
    ///
    /// Returns where the change landed on the output clock, or nil when no picture was drawn
    /// within `timeout` (no push runs, it is paused, or it copies its video): the change is kept
    /// and shows on the next picture drawn. Overlays stay from one push to the next, like filters.
    ///
    /// Throws `overlayInvalid` (a field out of bounds, an id in use, more than
    /// ``Overlay/maxLive`` overlays), `overlayNotFound`, `imageOpenFailed` or `fontUnavailable`;
    /// nothing changes then.
    @discardableResult
    public func changeOverlay(_ change: OverlayChange, waitingUpTo timeout: Duration = .seconds(2)) async throws(LivePushError) -> OverlayApplied? {
        let receipt = try overlayStage.submit(change)
        return await receipt.wait(upTo: timeout)
    }

    /// Sends one change of the live overlays without waiting for a picture (see
    /// ``changeOverlay(_:waitingUpTo:)``).
    public func sendOverlayChange(_ change: OverlayChange) throws(LivePushError) {
        _ = try overlayStage.submit(change)
    }

    /// The live overlays, as the changes sent so far leave them.
    public var overlays: [Overlay] { overlayStage.requested }
}
