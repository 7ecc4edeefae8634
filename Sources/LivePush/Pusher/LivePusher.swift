import Dispatch
import Synchronization

/// Pushes media to an RTMP server. The one object an app holds.
///
/// ```swift
/// let pusher = LivePusher(config: PushConfig())
/// pusher.infoDelegate = self
/// try pusher.start(file: "show.mp4", url: "rtmp://live.example.com/app/stream")
/// for await event in pusher.events() { print(event) }
/// ```
/// `start` throws at once for what can be checked locally (an illegal URL, a missing file,
/// a file that is not media, a codec that cannot be pushed); everything that happens on the
/// network arrives later as events. Every public method is thread-safe.
public final class LivePusher: Sendable {
    /// The configuration the pusher was created with.
    public let config: PushConfig
    let hub = EventHub()
    /// The running push (which decides its own state), or how the last one ended.
    let slot = Mutex(PushSlot())
    /// Timers of the current push (statistics, auth expiry, adaptive bitrate).
    private let timers = Mutex<[any DispatchSourceTimer]>([])
    private let authWatcher: Mutex<AuthExpiryWatcher>
    /// Whether the current push is in interactive mode (a WHIP output): it reports its
    /// connection status, and a refreshed token is the WHIP bearer token.
    private let interactivePush = Mutex(false)
    var isInteractive: Bool { interactivePush.withLock { $0 } }
    /// Filters and the detector the app set up: each push starts with them, and changes reach
    /// the running push as commands (``FrameStages``). Changed and sent under this lock, so a
    /// push receives them in the order they were made.
    let stageSettings = Mutex(StageSettings())
    /// Background music, effects and volumes; it outlives pushes (music started before `start`
    /// begins with it).
    let mixer = AudioMixer()
    /// The live overlays (``changeOverlay(_:waitingUpTo:)``), drawn by every push of this pusher.
    let overlayStage = OverlayStage()
    /// The opportunity and content resolvers the next push consults (SCTE-35 by default).
    public let resolvers = ResolverRegistry()

    /// Creates an idle pusher.
    public init(config: PushConfig = PushConfig()) {
        self.config = config
        authWatcher = Mutex(AuthExpiryWatcher(configuration: config.auth))
        mixer.setReporter { [weak self] event in self?.emit(event) }
    }

    deinit {
        runningPush?.requestStop()
        cancelTimers()
    }

    func cancelTimers() {
        // Cancelling only marks a timer: its handler is never called again, nothing waits.
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers.removeAll()
        }
    }

    // MARK: - Delegates and events

    /// Receives the info callbacks; held weakly.
    public var infoDelegate: (any LivePusherInfoDelegate)? {
        get { hub.current().info }
        set { hub.update { $0.info = newValue } }
    }

    /// Receives the network callbacks; held weakly.
    public var networkDelegate: (any LivePusherNetworkDelegate)? {
        get { hub.current().network }
        set { hub.update { $0.network = newValue } }
    }

    /// Receives the error callbacks; held weakly.
    public var errorDelegate: (any LivePusherErrorDelegate)? {
        get { hub.current().error }
        set { hub.update { $0.error = newValue } }
    }

    /// Receives the background-music callbacks; held weakly.
    public var bgmDelegate: (any LivePusherBGMDelegate)? {
        get { hub.current().bgm }
        set { hub.update { $0.bgm = newValue } }
    }

    /// Receives the filter callbacks; held weakly.
    public var filterDelegate: (any LivePusherFilterDelegate)? {
        get { hub.current().filter }
        set { hub.update { $0.filter = newValue } }
    }

    /// A stream of every event from now on. It ends after the push's final `stopped` event;
    /// call again for the next push.
    public func events() -> AsyncStream<PushEvent> { hub.makeStream() }

    /// Where the push is now.
    public var state: PushState { slot.withLock { $0.state } }

    // MARK: - Control

    /// Starts pushing a media file, or standard input for the path `-` (any container libavformat
    /// reads from a pipe: MPEG-TS, FLV, NUT, Matroska...; it cannot be looped). Returns once the
    /// file is open; connecting happens in the background (watch `pushStarted` / `connectFailed`).
    public func start(file path: String, url: String) throws(LivePushError) {
        try start(file: path, urls: [url])
    }

    /// Simulcast: pushes one source (read, filtered and encoded once) to every URL. Each
    /// destination is an output of its own: its own send queue, connection, reconnect and
    /// stale-session policy, so one that is refused, stalls or dies never slows or stops the
    /// others. Each output's events arrive tagged (``PushEvent/output(id:url:_:)``, id = the URL's
    /// position); the un-tagged events describe the push as a whole: started when the first
    /// output publishes, `connectionLost` when none is publishing any more, `reconnectFailed`
    /// when all gave up, failed only when every first connect failed. ``stats()`` carries each
    /// output's figures in `outputs`. The auth_key watch and `refreshPushURL` concern the first URL.
    public func start(file path: String, urls: [String]) throws(LivePushError) {
        if path == FFDemuxer.standardInput && config.looping != .once {
            throw LivePushError(.invalidState, "standard input cannot be looped: it can be read only once")
        }
        try checkCanStart()
        let pushURLs = try Self.parse(urls)
        let stages = makeStages()
        let media = mediaOptions
        if FFInputPolicy.liveProtocols(for: path) != nil {
            let live = try FailoverInput(url: path, options: config.liveInput, media: media,
                                         clock: config.monotonicClock, tls: config.tls,
                                         hlsTags: config.breaks.subscription.hlsTags) { [weak self] in
                self?.emit(.input($0))
            }
            // An HLS input's tags are cues: its breaks work as a TS file's do.
            let breaks = live.readsCues ? try makeBreakSetup(for: live.info, path: nil, stages: stages) : nil
            try start(InputAndStages(input: live, stages: stages, breaks: breaks), urls: pushURLs, liveInputStats: { live.stats })
            return
        }
        let source = try MediaInputFactory.open(path: path, options: media, stages: stages)
        let breaks = try makeBreakSetup(for: source.info, path: path, stages: stages)
        try start(InputAndStages(input: source, stages: stages, breaks: breaks), urls: pushURLs)
    }

    /// Starts pushing from any ``MediaInput``. The pusher takes the source over: do not use
    /// it from elsewhere until the push ends (`sending`: the compiler checks it). A `Sendable`
    /// input, such as ``FrameInput`` or ``PacketInput``, is still fed from the app's threads.
    public func start(source: sending any MediaInput, url: String) throws(LivePushError) {
        try start(source: source, urls: [url])
    }

    /// Simulcast from any ``MediaInput`` (see ``start(file:urls:)``).
    public func start(source: sending any MediaInput, urls: [String]) throws(LivePushError) {
        try checkCanStart()
        let stages = makeStages()
        try start(InputAndStages(input: source, stages: stages), urls: Self.parse(urls))
    }

    static func parse(_ urls: [String]) throws(LivePushError) -> [PushURL] {
        guard !urls.isEmpty else { throw LivePushError(.invalidURL, "no push URL given") }
        var parsed: [PushURL] = []
        for url in urls { parsed.append(try PushURL(url)) }
        return parsed
    }

    /// Throws unless a push may start now.
    func checkCanStart() throws(LivePushError) {
        let state = self.state
        if state.isActive { throw PushControl.refusal(of: .start, while: state) }
    }

    /// The next push's raw-frame stages, set up as the app asked. A filter that fails leaves
    /// the app's list too.
    func makeStages() -> FrameStages {
        FrameStages(settings: stageSettings.withLock { $0 }, mixer: mixer, overlays: overlayStage, report: { [weak self] in self?.emit($0) },
                    dropped: { [weak self] failed in self?.stageSettings.withLock { $0.filters.removeAll { ObjectIdentifier($0) == failed } } })
    }

    /// Starts a push of the input; it and its stages move to the push's producer.
    func start(_ starting: sending InputAndStages, urls: [PushURL],
               sequence: (any InputSequence)? = nil, channel: VideoEncoderSettings? = nil,
               liveInputStats: (@Sendable () -> LiveInputStats)? = nil) throws(LivePushError) {
        let (source, stages, breaks) = (starting.input, starting.stages, starting.breaks)
        // The app's pictures (and a transcoded file's) are encoded by the push: they can take
        // filters from now on, and pause can show the image.
        if source.info.video?.pictureSettings != nil { stages.figures.videoEncoderOpened() }
        let slate = try makeSlate(for: source.info, encodesVideo: stages.figures.encodesVideo)
        let inputsMayChange = sequence != nil || slate != nil
        let videoEncode = try makeVideoEncodeStage(source: source.info, slate: slate?.info,
                                                   inputsMayChange: inputsMayChange || breaks != nil, urls: urls,
                                                   channel: channel, stages: stages)
        let audioEncode = try makeAudioEncodeStage(source: source.info, urls: urls, stages: stages)
        let info = Self.announced(source.info, encodedBy: videoEncode, audioEncode: audioEncode)
        let afterClock = try makeStagesAfterClock(for: info, urls: urls, inputsMayChange: inputsMayChange,
                                                  videoEncode: videoEncode, audioEncode: audioEncode)
        let recorder = try config.recordPath.map { path throws(LivePushError) in
            try FLVRecorder(path: path, info: info, waitsWhenFull: config.pacing == .asFastAsPossible,
                            keepsExisting: config.recordKeepsExisting) { [weak self] error in
                self?.report(error)
            }
        }
        let newSession = PushEngine(config: config, urls: urls, info: info, stageFigures: stages.figures, hasSlate: slate != nil,
                                    recorder: recorder, sequence: sequence, breakResolution: breaks?.resolution,
                                    afterClock: afterClock,
                                    isURLExpired: { [weak self] in self?.urlHasExpired() ?? false },
                                    liveInputStats: liveInputStats,
                                    emit: { [weak self] in self?.emit($0) }, ended: { [weak self] in self?.pushEnded($0) })
        let interactive = urls.contains(where: \.isWHIP)
        interactivePush.withLock { $0 = interactive }
        if let token = config.whipToken {
            for output in newSession.outputs where output.kind == .whip { output.updateWHIPToken(token) }
        }
        do {
            try stageSettings.withLock { (settings: inout StageSettings) throws(LivePushError) in
                // Checked, started and held in one lock: two starts never both go.
                try slot.withLock { (slot: inout PushSlot) throws(LivePushError) in
                    if let running = slot.running { throw PushControl.refusal(of: .start, while: running.pushState) }
                    try newSession.receive(.start)
                    slot = PushSlot(running: newSession)
                }
                // What the app changed since the stages were made (while the input opened) follows.
                newSession.send(.setFilters(settings.filters))
                newSession.send(.setDetector(settings.detector))
            }
        } catch {
            recorder?.finish()
            throw error
        }
        authWatcher.withLock { watcher in
            watcher.accept(urls[0])
            if interactive, let token = config.whipToken { watcher.watch(bearerToken: token) }
        }
        startStatsTimer()
        startAuthTimer()
        newSession.start(ProducerParts(source: source, slate: slate, stages: stages, afterClock: afterClock, breaks: breaks))
        FreedMemory.releaseSoon()
    }

    /// Stops sending the source but keeps the connection. With ``PushConfig/pauseImage``
    /// the image goes out instead, at ``PushConfig/pauseImageFrameRate`` with silent audio;
    /// without one, nothing is sent until `resume()`.
    public func pause() throws(LivePushError) {
        try call(.pause)
    }

    /// Continues from where `pause()` stopped, on a keyframe, with continuous timestamps.
    public func resume() throws(LivePushError) {
        try call(.resume)
    }

    /// Ends the push: the server is told the stream ended, `stopped` follows.
    public func stop() throws(LivePushError) {
        try call(.stop)
    }

    /// Stops one output of a running push (by the position of its URL): it unpublishes and
    /// closes; the other outputs go on untouched. Throws `channelNotFound` for no such output.
    public func stopOutput(_ id: Int) throws(LivePushError) {
        guard let running = runningPush, running.outputs.indices.contains(id) else {
            throw LivePushError(.channelNotFound, "no output \(id) in this push")
        }
        try running.receive(.stopOutput(id))
    }

    /// Reconnects now: after `reconnectFailed` (the automatic retries were used up), or to
    /// force a new connection while pushing. The stream resumes on a keyframe.
    public func reconnect() throws(LivePushError) {
        try call(.reconnect)
    }

    /// A new push URL (a freshly signed auth_key, a new token) for every later connect; the
    /// current connection is not interrupted. Call `reconnect()` to switch at once.
    public func refreshPushURL(_ url: String) throws(LivePushError) {
        let pushURL = try PushURL(url)
        authWatcher.withLock { $0.accept(pushURL) }
        runningPush?.updateURL(pushURL)
    }

    /// Interactive mode: replaces the token, for the next connect (or ICE restart); the current
    /// connection goes on. With WHIP outputs it is their bearer token; else the token in the
    /// current push URL (see `refreshPushURL(_:)`).
    public func refreshPushURLToken(_ token: String) throws(LivePushError) {
        if isInteractive {
            guard !token.isEmpty else { throw LivePushError(.tokenInvalid, "an empty token") }
            authWatcher.withLock { $0.watch(bearerToken: token) }
            try runningPush?.receive(.updateWHIPToken(token))
            return
        }
        guard let current = authWatcher.withLock({ $0.url }) else {
            throw LivePushError(.invalidState, "no push URL to refresh")
        }
        try refreshPushURL(PushToken.replacing(in: current, with: token, parameter: config.auth.tokenParameter))
    }

    /// A snapshot of the current (or last) push.
    public func stats() -> PushStats {
        let (running, last) = slot.withLock { ($0.running, $0.lastStats) }
        return running.map(snapshot) ?? last
    }

    /// Every output's own figures (connected, reconnects, sent), of the current push or, once it
    /// ended, as it ended; by the position of the output's URL. (``PushStats/outputs`` lists
    /// them only with several outputs.)
    func outputFigures() -> [OutputStats] {
        let (running, last) = slot.withLock { ($0.running, $0.lastOutputs) }
        return running.map { $0.outputs.map { $0.outputStats() } } ?? last
    }

    func snapshot(_ session: PushEngine) -> PushStats {
        session.snapshot()
    }

    /// Waits for the end of the current push and returns its final statistics, or throws
    /// the error that ended it.
    public func waitUntilFinished(_ events: AsyncStream<PushEvent>) async throws(LivePushError) -> PushStats {
        var final = PushStats()
        for await event in events {
            if case .stopped(let stats) = event { final = stats }
        }
        if case .failed(let error) = state { throw error }
        return final
    }

    // MARK: - Helpers

    func emit(_ event: PushEvent) {
        hub.emit(event, from: self, on: config.callbackQueue)
    }

    /// Reports an error that happened on the app's side of a callback (e.g. an illegal URL
    /// returned from `pusherPushURLAuthenticationOverdue`).
    func report(_ error: LivePushError) {
        emit(.sdkError(error))
    }

    // MARK: - Auth expiry

    private func urlHasExpired() -> Bool {
        let now = config.wallClock.now
        return authWatcher.withLock { watcher in
            [watcher.authKeyExpiresAt, watcher.tokenExpiresAt].contains { expiry in expiry.map { now > $0 } ?? false }
        }
    }

    private func pollAuth() {
        let due = authWatcher.withLock { $0.poll(now: config.wallClock.now) }
        for event in due {
            switch event {
            case .authenticationOverdue:
                emit(.pushURLAuthenticationOverdue(url: authWatcher.withLock { $0.url?.redacted } ?? ""))
            case .tokenWillExpire:
                emit(.tokenWillExpire)
            case .tokenExpired:
                if let error = event.error { emit(.tokenExpired(error)) }
            case .authExpired:
                // The stream goes on (servers check auth at publish); the next connect will fail
                // with `authExpired` unless a new URL arrives first.
                break
            }
        }
    }

    /// Polls the URL's expiry once a second while pushing; cheap, and the lead times are tens of seconds.
    private func startAuthTimer() {
        guard authWatcher.withLock({ $0.isWatching }) else { return }
        startTimer(every: .seconds(1), firstAfter: .zero) { $0.pollAuth() }
    }

    private func startStatsTimer() {
        guard config.statsInterval > .zero else { return }
        startTimer(every: config.statsInterval) { pusher in
            guard let current = pusher.runningPush else { return }
            pusher.emit(.stats(pusher.snapshot(current)))
        }
    }

    /// A repeating timer on the callback queue, cancelled when the push ends.
    private func startTimer(every interval: Duration, firstAfter delay: Duration? = nil, _ body: @escaping @Sendable (LivePusher) -> Void) {
        let period = DispatchTimeInterval.microseconds(Int(interval.nanoseconds / 1000))
        let first = DispatchTimeInterval.microseconds(Int((delay ?? interval).nanoseconds / 1000))
        // Made under the lock that keeps it: the timer never leaves it (only cancelled there).
        timers.withLock { timers in
            let timer = DispatchSource.makeTimerSource(queue: config.callbackQueue)
            timer.schedule(deadline: .now() + first, repeating: period)
            timer.setEventHandler { [weak self] in
                if let self { body(self) }
            }
            timer.resume()
            timers.append(timer)
        }
    }
}
