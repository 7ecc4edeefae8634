/// A change to a push's live overlays (``LivePusher/changeOverlay(_:waitingUpTo:)``): it takes
/// effect on the first picture the push encodes after the change was accepted.
public enum OverlayChange: Sendable, Equatable {
    /// Shows a new overlay; its id must not be in use.
    case add(Overlay)
    /// Replaces the overlay with the same id (a fade-in already done is not run again).
    case update(Overlay)
    /// Removes the overlay with this id (after its fade-out).
    case remove(id: String)

    /// The overlay's id.
    public var id: String {
        switch self {
        case .add(let overlay), .update(let overlay): overlay.id
        case .remove(let id): id
        }
    }
}

/// Where a change landed on the push's output clock.
public struct OverlayApplied: Sendable, Equatable {
    /// The overlay's id.
    public var id: String
    /// The presentation time of the first picture drawn with the change, on the output clock
    /// (the time outputs and recordings carry, from 0 at the push's start).
    public var mediaTime: Duration
    /// That picture's number at the push's frame rate (`mediaTime × fps`, rounded).
    public var frame: Int
    /// The presentation time of the last picture drawn before the change (nil: none yet).
    public var after: Duration?

    /// Creates a record.
    public init(id: String, mediaTime: Duration, frame: Int, after: Duration?) {
        self.id = id
        self.mediaTime = mediaTime
        self.frame = frame
        self.after = after
    }
}
