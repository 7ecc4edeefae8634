extension RTMPReceiver {
    /// What one peer may cost the receiver. Anyone who can reach the port can open connections
    /// and send any bytes, so each resource a connection holds has a bound; past it the
    /// receiver refuses or closes, counts it (``RTMPReceiver/limitCounters()``) and emits
    /// ``ReceiverEvent/limitReached(_:remote:)``.
    public struct Limits: Sendable, Equatable {
        /// A connection must finish the RTMP handshake within this time (a socket that sends
        /// nothing holds a descriptor for good otherwise).
        public var handshakeTimeout: Duration
        /// A connection that sends nothing for this long is closed (nginx-rtmp's `timeout`).
        public var idleTimeout: Duration
        /// Connections open at once. At the cap, a new connection takes the place of the oldest one
        /// still in its handshake (so idle sockets cannot lock publishers out); if there is none,
        /// it is refused. The receiver also keeps below the process's descriptor limit.
        public var maxConnections: Int
        /// Publishes one connection may make over its life (a publisher makes one; a reconnect is
        /// a new connection).
        public var maxPublishesPerConnection: Int
        /// Streams (`createStream`) one connection may create over its life.
        public var maxStreamsPerConnection: Int
        /// Bytes of replies queued toward a peer that does not read them; past it the connection
        /// is closed (a client that pings and never reads would grow the process without bound).
        public var maxUnreadReplyBytes: Int
        /// Bytes of unfinished messages held across a connection's chunk streams, and how many
        /// chunk streams it may use.
        public var maxChunkStreamBytes: Int
        /// Chunk streams one connection may use.
        public var maxChunkStreams: Int
        /// Longest app or stream name, in UTF-8 bytes; a longer one is refused, never echoed.
        public var maxNameBytes: Int
        /// Largest `connect` command the receiver decodes, in bytes. A real client's is well under
        /// 1 KiB; a larger one (a million-entry `fourCcList`) is rejected unread.
        public var maxConnectCommandBytes: Int
        /// Largest `onMetaData` message the receiver decodes for its summary, in bytes. A larger one
        /// is still recorded to the FLV file, but not read.
        public var maxMetadataMessageBytes: Int

        /// Creates limits.
        public init(
            handshakeTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            maxConnections: Int = 1024,
            maxPublishesPerConnection: Int = 16,
            maxStreamsPerConnection: Int = 64,
            maxUnreadReplyBytes: Int = 1 << 20,
            maxChunkStreamBytes: Int = 0xFF_FFFF + 64 * 1024,
            maxChunkStreams: Int = 64,
            maxNameBytes: Int = 1024,
            maxConnectCommandBytes: Int = 64 * 1024,
            maxMetadataMessageBytes: Int = 64 * 1024
        ) {
            self.maxConnectCommandBytes = maxConnectCommandBytes
            self.maxMetadataMessageBytes = maxMetadataMessageBytes
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
            self.maxConnections = maxConnections
            self.maxPublishesPerConnection = maxPublishesPerConnection
            self.maxStreamsPerConnection = maxStreamsPerConnection
            self.maxUnreadReplyBytes = maxUnreadReplyBytes
            self.maxChunkStreamBytes = maxChunkStreamBytes
            self.maxChunkStreams = maxChunkStreams
            self.maxNameBytes = maxNameBytes
        }
    }
}

/// A bound of ``RTMPReceiver/Limits`` that a peer reached.
public enum ReceiverLimit: String, Sendable, CaseIterable {
    /// A connection was refused: the receiver was at ``RTMPReceiver/Limits/maxConnections``.
    case connectionRefused
    /// A connection still in its handshake was closed to make room for a new one.
    case connectionEvicted
    /// A handshake took too long.
    case handshakeTimeout
    /// A connection was idle too long.
    case idleTimeout
    /// Too many publishes on one connection.
    case publishesPerConnection
    /// Too many streams on one connection.
    case streamsPerConnection
    /// Closed: the peer did not read our replies.
    case unreadReplies
    /// Closed: unfinished messages or chunk streams past the cap.
    case chunkStreamBuffers
    /// An app or stream name too long was refused.
    case nameTooLong
    /// A number from the wire out of range (a stream id that is NaN, negative or too large) was ignored.
    case numberOutOfRange
    /// A `connect` command larger than ``RTMPReceiver/Limits/maxConnectCommandBytes`` was rejected unread.
    case connectTooLarge
    /// An `onMetaData` larger than ``RTMPReceiver/Limits/maxMetadataMessageBytes`` was recorded but not read.
    case metadataTooLarge
    /// A `fourCcList` or an `onMetaData` was cut to what a summary keeps (see `PeerValueCaps`).
    case peerValuesTrimmed
}

/// How often each limit was reached since the receiver started.
public struct ReceiverLimitCounters: Sendable, Equatable, CustomStringConvertible {
    /// How often each limit was hit.
    public private(set) var counts: [ReceiverLimit: Int] = [:]

    /// How often this limit was hit.
    public subscript(limit: ReceiverLimit) -> Int { counts[limit] ?? 0 }

    mutating func note(_ limit: ReceiverLimit) { counts[limit, default: 0] += 1 }

    /// `handshakeTimeout=1500 unreadReplies=1`, in the declaration order; "none" when nothing was reached.
    public var description: String {
        let reached = ReceiverLimit.allCases.filter { self[$0] > 0 }.map { "\($0.rawValue)=\(self[$0])" }
        return reached.isEmpty ? "none" : reached.joined(separator: " ")
    }
}
