extension RTMPReceiver {
    /// Where the receiver listens, what it records and its limits.
    public struct Configuration: Sendable {
        /// Listen address.
        public var host: String
        /// 0 binds an ephemeral port; read it from `start()` or `port`.
        public var port: Int
        /// When set, each publish is recorded to `<recordDirectory>/<stream>.flv`: the stream name
        /// made a safe file name (`RTMPSessionHandler/fileName(_:)`), written to a file of its own
        /// and given that name when it ends, or `<stream>-ID.flv` (and on) when a file has it: no
        /// recording ever replaces another file.
        public var recordDirectory: String?
        /// Window Acknowledgement Size sent after connect (the client acknowledges this often).
        public var windowAcknowledgementSize: UInt32
        /// Set Peer Bandwidth sent after connect (limit type dynamic).
        public var peerBandwidth: UInt32
        /// Set Chunk Size sent after connect; nil keeps the default 128.
        public var outgoingChunkSize: UInt32?
        /// When set, a publish must carry a valid `auth_key` (type A) or is rejected.
        public var authentication: PublishAuthentication?
        /// When set, a publish must carry this secret as `?key=` after its stream name or is rejected.
        public var publishKey: PublishKey?
        /// What one peer may cost (connections, time, memory, names).
        public var limits: Limits

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            recordDirectory: String? = nil,
            windowAcknowledgementSize: UInt32 = 2_500_000,
            peerBandwidth: UInt32 = 2_500_000,
            outgoingChunkSize: UInt32? = 4096,
            authentication: PublishAuthentication? = nil,
            publishKey: PublishKey? = nil,
            limits: Limits = Limits()
        ) {
            self.publishKey = publishKey
            self.limits = limits
            self.authentication = authentication
            self.host = host
            self.port = port
            self.recordDirectory = recordDirectory
            self.windowAcknowledgementSize = windowAcknowledgementSize
            self.peerBandwidth = peerBandwidth
            self.outgoingChunkSize = outgoingChunkSize
        }
    }
}
