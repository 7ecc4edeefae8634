/// One thing an HLS output asks of its store (a directory, an HTTP origin), in the order given:
/// a segment before the playlist that lists it, a segment's removal after the playlist that no
/// longer does.
enum HLSWrite: Sendable, Equatable {
    /// Store `bytes` as `name` (a segment, or the playlist), replacing what was there whole.
    case put(name: String, bytes: [UInt8])
    /// Remove `name` (a segment that left the playlist's window).
    case delete(name: String)

    var name: String {
        switch self {
        case .put(let name, _), .delete(let name): name
        }
    }

    /// Bytes it carries (what the writer's queue counts).
    var byteCount: Int {
        switch self {
        case .put(_, let bytes): bytes.count
        case .delete: 0
        }
    }
}
