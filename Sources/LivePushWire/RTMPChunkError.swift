/// A violation of the RTMP chunk stream format.
public struct RTMPChunkError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { "RTMP chunk stream: \(message)" }
}
