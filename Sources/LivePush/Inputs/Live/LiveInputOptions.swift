/// How a live (network) input is read and what stands in when it is lost
/// (``PushConfig/liveInput``; `--backup`, `--input-loss`, `--input-timeout`).
public struct LiveInputOptions: Sendable, Equatable {
    /// No media for this long means the primary is lost (`--input-timeout`, default 3 s).
    public var timeout: Duration = .seconds(3)
    /// A file or URL played (looped) while the primary is lost; nil: the slate.
    public var backup: String?
    /// What fills the time until the timeout decides.
    public var loss: InputLossFill = .repeatLastFrame
    /// The slate's picture (any image libavcodec reads); nil: black.
    public var slateImage: String?
    /// The primary must deliver without a gap this long before the output switches back to it:
    /// a feed that flaps does not flap the output.
    public var returnAfter: Duration = .seconds(2)
    /// Media held between the feed and the output to absorb its jitter (the output runs this
    /// much behind the feed). Frames beyond twice this are dropped, oldest first, and counted.
    public var jitterBuffer: Duration = .milliseconds(300)
    /// Waits between attempts to reach the primary: from this, doubling, up to `maxRetryInterval`.
    public var retryInterval: Duration = .milliseconds(500)
    /// The longest wait between attempts to reopen the primary.
    public var maxRetryInterval: Duration = .seconds(5)
    /// Whether an http(s) feed may lead elsewhere: its redirects followed, an HLS playlist's
    /// segments opened. Off for an input a control-API caller gave (``APIInputPolicy``): either
    /// would reach hosts its rules never saw.
    public var followsReferences = true

    /// Creates the default options.
    public init() {}
}

/// What fills a frame slot while the primary is late but not yet lost (`--input-loss`).
public enum InputLossFill: String, Sendable, Equatable, CaseIterable {
    /// The last picture again (a frozen frame), with silence.
    case repeatLastFrame = "repeat"
    /// Black, with silence.
    case black
    /// The slate (``LiveInputOptions/slateImage``, else black), with silence.
    case slate
}
