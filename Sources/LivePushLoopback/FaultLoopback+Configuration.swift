extension FaultLoopback {
    /// Where the loopback listens, where it relays, and what it injects.
    public struct Configuration: Sendable {
        /// Listen address.
        public var host: String
        /// 0 binds an ephemeral port; read it from `start()` or `port`.
        public var port: Int
        /// Relay mode: `host:port` or an `rtmp://host[:port]/...` URL (only host and port are
        /// used). nil: terminate RTMP locally, like ``RTMPReceiver``.
        public var upstream: String?
        /// Terminating mode: record each publish to `<recordDirectory>/<stream>.flv`.
        public var recordDirectory: String?
        /// The faults to inject; change them while running with ``FaultLoopback/setFaults(_:)``.
        public var faults: [FaultRule]
        /// Upper bound for connecting to the upstream server.
        public var upstreamConnectTimeout: Duration
        /// Terminating mode: check each publish's `auth_key` like a CDN does.
        public var authentication: PublishAuthentication?

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            upstream: String? = nil,
            recordDirectory: String? = nil,
            faults: [FaultRule] = [],
            upstreamConnectTimeout: Duration = .seconds(5),
            authentication: PublishAuthentication? = nil
        ) {
            self.authentication = authentication
            self.host = host
            self.port = port
            self.upstream = upstream
            self.recordDirectory = recordDirectory
            self.faults = faults
            self.upstreamConnectTimeout = upstreamConnectTimeout
        }
    }
}
