/// A violation of the RTMP chunk stream format.
public struct RTMPChunkError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The stream was well formed but went past a bound the decoder was given
    /// (``RTMPChunkDecoder/maxBufferedPayloadBytes``, ``RTMPChunkDecoder/maxChunkStreams``).
    public var isLimit: Bool

    public init(_ message: String, isLimit: Bool = false) {
        self.message = message
        self.isLimit = isLimit
    }

    public var description: String { "RTMP chunk stream: \(message)" }
}
