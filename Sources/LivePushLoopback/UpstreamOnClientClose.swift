/// What the relay does with the upstream connection when the client's side closes. Sent by
/// ``FaultHandler`` through the client pipeline to ``RelayGlueHandler`` (ignored without a relay).
enum UpstreamOnClientClose: Sendable {
    /// Close it too: the server sees the publisher go (the default).
    case close
    /// Keep it open and silent for this long (nil: until the loopback stops), as a path that
    /// died silently would: the server still believes the old publisher is there.
    case keepOpen(for: Duration?)
}
