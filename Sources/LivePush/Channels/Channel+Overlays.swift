/// A running channel's live overlays: they belong to its push, so they go when it stops.
extension Channel {
    /// Changes the running channel's live overlays (``LivePusher/changeOverlay(_:waitingUpTo:)``).
    /// Throws `invalidState` when the channel is not running: its overlays go with its push.
    @discardableResult
    public func changeOverlay(_ change: OverlayChange, waitingUpTo timeout: Duration = .seconds(2)) async throws(LivePushError) -> OverlayApplied? {
        guard let pusher = runningPusher else {
            throw LivePushError(.invalidState, "channel \"\(id)\" is not running")
        }
        return try await pusher.changeOverlay(change, waitingUpTo: timeout)
    }

    /// The running channel's live overlays (none when stopped).
    public var overlays: [Overlay] { runningPusher?.overlays ?? [] }
}
