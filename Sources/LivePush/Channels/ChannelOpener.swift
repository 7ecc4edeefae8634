import Dispatch

/// Opens a channel's push: its input (a live feed's probe, a file, a schedule) and its outputs.
///
/// An open can take as long as the input's timeout (a live feed that does not answer its probe)
/// or a DNS lookup. So it runs on the opening workers, which only opens use (16 threads at most):
/// never on the control API's request path, the cooperative pool or another shared pool, and
/// never while the channel's lifecycle lock is held. The channel learns the outcome through
/// `done`, called on that thread.
enum ChannelOpener {
    /// What an open gives the channel: the push started, and a playout channel's controls.
    struct Opened: Sendable {
        let pusher: LivePusher
        let playout: PlayoutControl?

        /// Stops a push its channel no longer wants (a stop, restart or removal overtook the
        /// open). Its only error is `invalidState` for a push already ended, which is the aim.
        func discard() {
            try? pusher.stop()
        }
    }

    /// One callback queue for every channel's push: a channel reads its events from the stream
    /// and sets no delegates, and a queue per channel made libdispatch start a pool thread for
    /// many of them whenever their events came at once.
    static let callbackQueue = DispatchQueue(label: "livepush.channels.callbacks")

    /// The push settings of a channel.
    static func config(for spec: ChannelSpec) -> PushConfig {
        var config = PushConfig()
        config.statsInterval = .zero
        config.callbackQueue = callbackQueue
        config.recordPath = spec.record
        config.recordKeepsExisting = true
        // A 24/7 channel never gives up on its outputs, not even when its server is away at start.
        config.retryForever()
        config.breaks.alternate = spec.alternate
        config.outputVideoLadders = spec.outputVideoLadders
        if case .file(_, let loop) = spec.source { config.looping = loop }
        config.liveInput = spec.liveInput
        config.media.loudness = spec.loudness
        return config
    }

    /// Starts `pusher` on `spec`'s source on one of the opening workers (`livepush.open`,
    /// ``ConnectionWorkers/opening``), and reports. 200 channels started together (a process's
    /// start, a reload) open 16 at a time rather than make 200 threads for a moment; the
    /// others wait their turn in order, holding no thread.
    static func open(_ pusher: LivePusher, spec: ChannelSpec,
                     done: @escaping @Sendable (Result<Opened, LivePushError>) -> Void) {
        ConnectionWorkers.opening.run {
            do throws(LivePushError) {
                done(.success(Opened(pusher: pusher, playout: try start(pusher, spec: spec))))
            } catch {
                done(.failure(error))
            }
        }
    }

    /// Blocks until the push has started (or failed to).
    private static func start(_ pusher: LivePusher, spec: ChannelSpec) throws(LivePushError) -> PlayoutControl? {
        let urls = spec.outputs
        switch spec.source {
        case .file(let path, _):
            if urls.isEmpty { throw LivePushError(.invalidURL, "a file channel needs at least one output") }
            try pusher.start(file: path, urls: urls)
            return nil
        case .live(let url):
            try pusher.start(file: url, urls: urls)
            return nil
        case .playout(let schedulePath):
            let schedule = try PlayoutSchedule(contentsOfFile: schedulePath)
            return try pusher.start(playout: schedule, urls: urls)
        }
    }
}
