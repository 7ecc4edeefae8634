extension SRTRelay {
    /// Where the relay listens, its upstream listener and its faults.
    public struct Configuration: Sendable {
        /// Listen address.
        public var host: String
        /// 0 binds an ephemeral port; read it from `start()` or `port`.
        public var port: Int
        /// The SRT listener: `host:port` or `srt://host:port[?...]` (only host and port are used).
        public var upstream: String
        /// The faults to inject.
        public var faults: [SRTFaultRule]
        /// A session nothing was heard of for this long ends (its caller gave up).
        public var idleTimeout: Duration

        /// Creates a configuration.
        public init(host: String = "127.0.0.1", port: Int = 0, upstream: String, faults: [SRTFaultRule] = [],
                    idleTimeout: Duration = .seconds(10)) {
            self.host = host
            self.port = port
            self.upstream = upstream
            self.faults = faults
            self.idleTimeout = idleTimeout
        }
    }
}
