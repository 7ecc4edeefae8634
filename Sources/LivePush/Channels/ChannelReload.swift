/// What a reload of `livepush channels` changed (``ChannelManager/reload(_:)``), by channel id.
public struct ChannelReload: Sendable, Equatable {
    /// The ids of the channels a reload added.
    public var added: [String] = []
    /// The ids of the channels a reload removed.
    public var removed: [String] = []
    /// Channels whose settings changed: stopped and started again with the new ones.
    public var restarted: [String] = []
    /// Channels that go on untouched: no reconnect, no gap.
    public var unchanged: [String] = []

    /// Creates an empty result.
    public init() {}
}
