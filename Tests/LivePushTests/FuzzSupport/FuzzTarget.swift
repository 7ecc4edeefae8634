import LivePushWire

/// The parsers that read a peer's bytes, each driven the way the SDK or the loopback drives it.
///
/// Compiled twice: into the unit tests, which replay the kept corpus (Tests/Fuzz/Corpus/<rawValue>)
/// through ``check(_:)``, and by scripts/fuzz.sh into one libFuzzer binary per case, whose harness
/// (Tests/Fuzz/<Target>.swift) calls ``fuzz(_:_:)``. So both run exactly the same code.
///
/// Beyond "does not crash", each check holds its parser to a property that any input must keep;
/// ``check(_:)`` returns the first one broken, if any.
enum FuzzTarget: String, CaseIterable, Sendable, FuzzCheck {
    /// AMF0 values (every command and data message body).
    case amf0
    /// A server's reply to the pusher's commands, as ServerReply reads it.
    case serverReply = "server-reply"
    /// The loopback's server side of the handshake.
    case handshake
    /// The chunk stream after the handshake, and the messages the loopback reads out of it.
    case chunkStream = "chunk-stream"
    /// An FLV file (a recording) and its tags.
    case flv
    /// A SCTE-35 splice_info_section (a source's cue stream, a received onAdCue).
    case scte35

    /// Runs the parser over `bytes`; the property it broke, or nil.
    func check(_ bytes: [UInt8]) -> String? {
        switch self {
        case .amf0: return Self.checkAMF0(bytes)
        case .serverReply: return Self.checkServerReply(bytes)
        case .handshake: return Self.checkHandshake(bytes)
        case .chunkStream: return Self.checkChunkStream(bytes)
        case .flv: return Self.checkFLV(bytes)
        case .scte35: return Self.checkSCTE35(bytes)
        }
    }

    // MARK: AMF0

    /// Whatever decodes re-encodes to bytes that decode to the same encoding (byte-wise, so NaNs
    /// with their payloads compare equal).
    static func checkAMF0(_ bytes: [UInt8]) -> String? {
        guard let values = try? AMF0.decode(bytes) else { return nil }
        let encoded = AMF0.encode(values)
        guard let again = try? AMF0.decode(encoded) else { return "re-encoded values do not decode: \(values)" }
        return AMF0.encode(again) == encoded ? nil : "re-encoding is not stable: \(values) → \(again)"
    }

    // MARK: SCTE-35

    /// A section that parses re-encodes to one that parses to the same section, and encoding
    /// again gives the same bytes (with a valid CRC, so a corrupted copy is refused).
    static func checkSCTE35(_ bytes: [UInt8]) -> String? {
        guard let section = try? SpliceInfoSection(parsing: bytes) else { return nil }
        let encoded = section.encoded()
        guard let again = try? SpliceInfoSection(parsing: encoded) else { return "a re-encoded section does not parse: \(section)" }
        guard again == section else { return "re-encoding changed the section: \(section) → \(again)" }
        var corrupted = encoded
        corrupted[corrupted.count / 2] ^= 0x40
        if (try? SpliceInfoSection(parsing: corrupted)) != nil, corrupted.count > 4 { return "a corrupted section passed its CRC" }
        return encoded == again.encoded() ? nil : "encoding is not stable: \(section)"
    }

    // MARK: Server reply

    /// The first byte is the message type (so both AMF0 and AMF3 commands are reached), the rest the body.
    static func checkServerReply(_ bytes: [UInt8]) -> String? {
        guard let typeID = bytes.first else { return nil }
        let reply = CommandReply(typeID: typeID, body: bytes.dropFirst())
        if reply != nil && typeID != RTMPMessageType.commandAMF0.rawValue && typeID != RTMPMessageType.commandAMF3.rawValue {
            return "a reply decoded from a message of type \(typeID)"
        }
        return nil
    }

    // MARK: Handshake

    /// Fed in pieces, the handshake takes exactly C0 C1 C2 and answers C1 with S0 S1 S2 echoing C1.
    static func checkHandshake(_ bytes: [UInt8]) -> String? {
        var handshake = RTMPHandshake()
        var pending: [UInt8] = []
        var answer: [UInt8]?
        for piece in pieces(of: bytes) {
            pending += piece
            if handshake.state == .done { continue }
            do {
                // As HandshakeHandler does: step until more bytes are needed or the handshake is done.
                stepping: while handshake.state != .done {
                    switch try handshake.step(&pending) {
                    case .needMore: break stepping
                    case .send(let bytes): answer = bytes
                    case .completed: break
                    }
                }
            } catch {
                return bytes.first == RTMPHandshake.version ? "rejected C0 with version 3: \(error)" : nil
            }
        }
        let size = RTMPHandshake.packetSize
        if bytes.count > size, bytes[0] == RTMPHandshake.version {
            guard let answer, answer.count == 1 + 2 * size, answer[0] == RTMPHandshake.version,
                  answer[(1 + size)...].elementsEqual(bytes[1...size])
            else { return "C0 C1 not answered with S0 S1 S2 echoing C1" }
        }
        let done = bytes.count >= 1 + 2 * size
        if done != (handshake.state == .done) { return "done after \(bytes.count) bytes: \(handshake.state)" }
        if done && !pending.elementsEqual(bytes[(1 + 2 * size)...]) { return "did not leave exactly the bytes after C2" }
        return nil
    }

    // MARK: Chunk stream

    /// Fed whole or in pieces, the chunk stream decodes to the same messages (and error); those
    /// messages chunked again decode to themselves; each is read the way the loopback reads it.
    static func checkChunkStream(_ bytes: [UInt8]) -> String? {
        let whole = ChunkStreamDecoding(pieces: [bytes[...]])
        let inPieces = ChunkStreamDecoding(pieces: pieces(of: bytes))
        if inPieces != whole { return "fed in pieces: \(inPieces), whole: \(whole)" }

        var encoder = RTMPChunkEncoder()
        let rechunked = whole.messages.reduce(into: [UInt8]()) { encoder.encode($1, into: &$0) }
        let again = ChunkStreamDecoding(pieces: [rechunked[...]])
        if again.messages != whole.messages || again.error != nil { return "re-chunked: \(again), first: \(whole)" }

        for message in whole.messages { readAsLoopback(message) }
        return nil
    }

    /// What RTMPSessionHandler and PublishRecorder decode out of a message.
    static func readAsLoopback(_ message: RTMPMessage) {
        switch message.type {
        case .aggregate:
            for sub in (try? RTMPAggregate.split(message)) ?? [] where sub.type != .aggregate { readAsLoopback(sub) }
        case .commandAMF0, .commandAMF3:
            _ = try? RTMPCommand(message: message)
        case .dataAMF0, .dataAMF3:
            var body = message.payload[...]
            if message.type == .dataAMF3, body.first == 0 { body = body.dropFirst() }
            _ = try? AMF0.decode(body)
        default:
            _ = message.payloadUInt32
        }
    }

    // MARK: FLV

    /// Tags read from a file and written again read back the same; a file read whole reads the
    /// same with a truncated tail allowed.
    static func checkFLV(_ bytes: [UInt8]) -> String? {
        let tolerant = try? FLVFileReader.tags(in: bytes, allowTruncatedTail: true)
        guard let tags = try? FLVFileReader.tags(in: bytes) else { return nil }
        if tolerant != tags { return "allowing a truncated tail changed a whole file's tags" }
        var writer = FLVFileWriter(hasAudio: true, hasVideo: true)
        for tag in tags {
            writer.append(type: tag.type, timestampMs: tag.timestampMs, body: tag.body)
            _ = (tag.isKeyframe, tag.isSequenceHeader, tag.compositionTimeMs)
            if tag.type == .script { _ = try? AMF0.decode(tag.body) }
        }
        let reread = try? FLVFileReader.tags(in: writer.bytes)
        return reread == tags ? nil : "tags written again read back as \(String(describing: reread))"
    }

    // MARK: Pieces

    /// `bytes` cut into pieces of varied sizes, as a socket would deliver them (the same cuts for
    /// the same input, so a finding replays).
    static func pieces(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        let sizes = [1, 7, 64, 3, 200, 2, 4096]
        var out: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + sizes[out.count % sizes.count])
            out.append(bytes[start..<end])
            start = end
        }
        return out
    }
}
