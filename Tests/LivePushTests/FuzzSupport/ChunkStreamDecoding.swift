import LivePushWire

/// What an ``RTMPChunkDecoder`` makes of a chunk stream delivered in the given pieces: the
/// messages up to the first error, and that error. Decoding stops there, as the loopback closes
/// the connection.
struct ChunkStreamDecoding: Equatable, CustomStringConvertible {
    var messages: [RTMPMessage] = []
    var error: RTMPChunkError?

    init(pieces: [ArraySlice<UInt8>]) {
        var decoder = RTMPChunkDecoder()
        do {
            for piece in pieces {
                decoder.append(piece)
                while let message = try decoder.nextMessage() { messages.append(message) }
            }
        } catch {
            self.error = error
        }
    }

    var description: String {
        "\(messages.count) messages (\(messages.map(\.payload.count)) bytes), error: \(error.map(\.message) ?? "none")"
    }
}
