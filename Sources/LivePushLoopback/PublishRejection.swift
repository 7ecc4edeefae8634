/// How ``Fault/rejectPublish(_:)`` answers `publish`.
public enum PublishRejection: String, Sendable, Equatable, CaseIterable {
    /// `onStatus` level error, code `NetStream.Publish.BadName`, "Bad stream name".
    case badName = "badname"
    /// `onStatus` level error, code `NetStream.Publish.BadName`, "Already publishing"
    /// (what nginx-rtmp and most servers send when the stream name is taken).
    case alreadyPublishing = "already"

    /// The `description` field of the rejection.
    var statusDescription: String {
        switch self {
        case .badName: return "Bad stream name (rejected by fault injection)"
        case .alreadyPublishing: return "Already publishing"
        }
    }
}
