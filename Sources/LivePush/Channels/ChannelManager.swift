import Logging
import Synchronization

/// Many channels in one process (`livepush channels`): they are added, started, stopped and
/// removed while the others run. Safe from any thread.
public final class ChannelManager: Sendable {
    private let channels = Mutex<[String: Channel]>([:])
    /// The order channels were added in (listing, metrics).
    private let order = Mutex<[String]>([])
    private let logger: Logger
    private let inputs: Mutex<APIInputPolicy>

    /// Checks the whole configuration (it was read with ``ChannelsConfig/init(json:relativeTo:)``)
    /// and takes its channels; nothing starts until ``startAll()``.
    public init(config: ChannelsConfig, logger: Logger = Logger(label: "livepush.channels")) throws(LivePushError) {
        try config.validate()
        self.logger = logger
        inputs = Mutex(config.apiInputs)
        for spec in config.channels { try add(spec, start: false) }
    }

    /// Starts every channel marked `autostart`. A channel that cannot start is reported (it
    /// stays `failed`, with its error); the others go on.
    public func startAll() {
        for channel in list where channel.spec.autostart {
            try? channel.start()
        }
    }

    /// Stops every channel without waiting for them to end.
    public func stopAll() {
        for channel in list { channel.stop() }
    }

    /// Stops every channel and waits, up to `timeout`, until their pushes have ended (each
    /// closes gracefully and finishes its recording); the channels stop side by side. A push
    /// that does not end in time is left behind: the process is stopping.
    public func stopAllAndWait(timeout: Duration = .seconds(10)) async {
        let channels = list
        let stops = Task {
            await withTaskGroup(of: Void.self) { group in
                for channel in channels { group.addTask { await channel.stopAndWait() } }
            }
        }
        let resumed = Mutex(false)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeOnce: @Sendable () -> Void = {
                if resumed.withLock({ done in defer { done = true }; return !done }) { continuation.resume() }
            }
            Task {
                await stops.value
                resumeOnce()
            }
            Task {
                try? await Task.sleep(for: timeout)
                resumeOnce()
            }
        }
    }

    /// The channels, in the configuration's order.
    public var list: [Channel] {
        let ids = order.withLock { $0 }
        return channels.withLock { table in ids.compactMap { table[$0] } }
    }

    /// The channel with this id, if there is one.
    public func channel(_ id: String) -> Channel? {
        channels.withLock { $0[id] }
    }

    /// Adds a channel (and starts it unless told otherwise). Throws `channelConfigInvalid` for
    /// an id already in use.
    @discardableResult
    public func add(_ spec: ChannelSpec, start: Bool = true) throws(LivePushError) -> Channel {
        let channel = Channel(spec: spec, logger: logger)
        let added = channels.withLock { table -> Bool in
            guard table[spec.id] == nil else { return false }
            table[spec.id] = channel
            return true
        }
        guard added else { throw ChannelsConfig.refuse(spec.id, "id", "is used by another channel") }
        order.withLock { $0.append(spec.id) }
        logger.info("channel added", metadata: ["channel": .string(spec.id), "event": "channelAdded"])
        if start { try channel.start() }
        return channel
    }

    /// Stops and removes a channel. Throws `channelNotFound`.
    public func remove(_ id: String) throws(LivePushError) {
        guard let channel = channels.withLock({ $0.removeValue(forKey: id) }) else {
            throw LivePushError(.channelNotFound, "channel \"\(id)\"")
        }
        order.withLock { $0.removeAll { $0 == id } }
        channel.stop()
        logger.info("channel removed", metadata: ["channel": .string(id), "event": "channelRemoved"])
    }

    /// Makes the running channels what `config` says (SIGHUP, `POST /reload`), as nginx reloads:
    /// channels that are new are added (and started when `autostart`), those that are gone
    /// stop, and those whose settings changed restart with the new ones. The others go on
    /// untouched. A configuration with an error is refused whole before anything changes. The
    /// file is the truth: a channel added through the API and not in it stops too.
    public func reload(_ config: ChannelsConfig) throws(LivePushError) -> ChannelReload {
        try config.validate()
        return reloading.withLock { _ in
            inputs.withLock { $0 = config.apiInputs }
            let current = list.map(\.spec)
            let wanted = Set(config.channels.map(\.id))
            var result = ChannelReload()
            for spec in current where !wanted.contains(spec.id) {
                try? remove(spec.id)
                result.removed.append(spec.id)
            }
            for spec in config.channels {
                if let old = current.first(where: { $0.id == spec.id }) {
                    if old == spec {
                        result.unchanged.append(spec.id)
                        continue
                    }
                    try? remove(spec.id)
                    result.restarted.append(spec.id)
                } else {
                    result.added.append(spec.id)
                }
                // Checked above: the id is free and the settings valid. A start that fails
                // leaves the channel `failed` with its error, as at startup.
                if let channel = try? add(spec, start: false), spec.autostart { try? channel.start() }
            }
            logger.info("configuration reloaded", metadata: [
                "event": "configReloaded", "added": .string(result.added.joined(separator: ",")),
                "removed": .string(result.removed.joined(separator: ",")),
                "restarted": .string(result.restarted.joined(separator: ",")),
                "unchanged": .string(result.unchanged.joined(separator: ",")),
            ])
            return result
        }
    }

    /// The network inputs control-API callers may give, as the configuration last read says.
    public var apiInputs: APIInputPolicy { inputs.withLock { $0 } }

    /// One reload at a time (a SIGHUP and a `POST /reload` may meet).
    private let reloading = Mutex(())

    /// Whether every channel that should run has published at least once (an orchestrator's
    /// readiness): started channels are pushing, or finished.
    public var isReady: Bool {
        list.allSatisfy { channel in
            let status = channel.snapshot.status
            return !channel.spec.autostart || status == .pushing || status == .finished || status == .stopped
        }
    }

    /// Whether every channel has ended (none starting, pushing or reconnecting).
    public var allEnded: Bool {
        list.allSatisfy { [.stopped, .failed, .finished].contains($0.snapshot.status) }
    }
}
