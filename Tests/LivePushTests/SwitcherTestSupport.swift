@testable import LivePush
import Synchronization

/// A synthetic input: 25 fps video (a keyframe every `gop` frames) and 48 kHz AAC (1024
/// samples a frame), in decode order, for `seconds`. Each packet's first byte names its input
/// and the rest its index on its track, so a test can tell whose media went out.
final class ScriptedSource: MediaInput {
    static let frame: Int64 = 40_000
    static let audioFrame: Int64 = 1024 * 1_000_000 / 48_000

    let name: UInt8
    let info: StreamInfo
    private let packets: [MediaPacket]
    private var position = 0
    /// Thrown when the packet at this position would be read (a failing input).
    var failAt: Int?
    private(set) var rewinds = 0
    private(set) var keyframeRequests: [Int64] = []
    private(set) var bitrates: [Int] = []

    /// `pictures`: its video track is raw pictures for the push's encode (``VideoTrackInfo/pictureSettings``,
    /// no configuration of its own); the packets stay scripted bytes (the switcher never looks inside).
    init(_ name: UInt8, seconds: Int, gop: Int = 25, video: [UInt8]? = [1, 0x64], audio: [UInt8]? = [0x11, 0x90], startingAt origin: Int64 = 0,
         audioLead: Int64 = 0, pictures: Bool = false) {
        self.name = name
        info = StreamInfo(
            video: video.map { configuration -> VideoTrackInfo in
                var track = VideoTrackInfo(width: 64, height: 64, frameRate: 25, bitrate: 0, decoderConfiguration: pictures ? [] : configuration)
                if pictures { track.pictureSettings = try? VideoEncoderSettings(width: 64, height: 64, frameRate: 25, options: MediaSourceOptions()) }
                return track
            },
            audio: audio.map { AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 0, audioSpecificConfig: $0) },
            duration: Int64(seconds) * 1_000_000)
        let end = origin + Int64(seconds) * 1_000_000
        var packets: [MediaPacket] = []
        if video != nil {
            for index in 0..<(seconds * 25) {
                let time = origin + Int64(index) * Self.frame
                packets.append(MediaPacket(kind: .video, data: [name] + Self.bytes(index), dts: time, pts: time, duration: Self.frame,
                                           importance: index % gop == 0 ? .key : .reference))
            }
        }
        if audio != nil {
            var index = 0
            while origin + Int64(index) * Self.audioFrame < end {
                let time = origin + Int64(index) * Self.audioFrame
                packets.append(MediaPacket(kind: .audio, data: [name] + Self.bytes(index), dts: time, pts: time,
                                           duration: Self.audioFrame, importance: .key))
                index += 1
            }
        }
        // Decode order; on a tie the sound first, as files interleave it. `audioLead`: the sound
        // is read that far ahead of the pictures (a file's interleaving, an encoder's delay).
        func order(_ packet: MediaPacket) -> (Int64, Int) {
            packet.kind == .audio ? (packet.dts - audioLead, 0) : (packet.dts, 1)
        }
        self.packets = packets.sorted { order($0) < order($1) }
    }

    private static func bytes(_ index: Int) -> [UInt8] { [UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)] }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        if let failAt, position == failAt { throw LivePushError(.mediaReadFailed, "input \(name) failed at packet \(position)") }
        guard position < packets.count else { return nil }
        position += 1
        return packets[position - 1]
    }

    func rewind() throws(LivePushError) {
        position = 0
        rewinds += 1
    }

    func requestKeyframe(atOrAfter time: Int64) { keyframeRequests.append(time) }

    func setVideoBitrate(_ bitsPerSecond: Int) { bitrates.append(bitsPerSecond) }
}

/// How to make a ``ScriptedSource`` (a value, so that a sequence can hold it and stay Sendable).
struct ScriptedEntry: Sendable {
    var name: UInt8
    var seconds: Int
    var gop = 25
    var video: [UInt8]? = [1, 0x64]
    var audio: [UInt8]? = [0x11, 0x90]
    var failAt: Int?
    var audioLead: Int64 = 0
    var pictures = false

    func make() -> ScriptedSource {
        let source = ScriptedSource(name, seconds: seconds, gop: gop, video: video, audio: audio, audioLead: audioLead, pictures: pictures)
        source.failAt = failAt
        return source
    }
}

/// A playout timeline of synthetic inputs: each entry follows the one before.
final class ScriptedSequence: InputSequence {
    private struct State {
        var entries: [ScriptedEntry]
        var skippedUnsent: [[MediaPacket]] = []
        /// Whether the next entry is open (an entry opens ahead on another thread in a push).
        var ready = true
        var whenReady: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>
    private let standIn: ScriptedEntry?
    /// The cues an entry asks for where it starts (output time µs).
    private let cueAtStart: @Sendable (Int64) -> [AdCue]

    init(_ entries: [ScriptedEntry], standIn: ScriptedEntry? = nil, cueAtStart: @escaping @Sendable (Int64) -> [AdCue] = { _ in [] }) {
        state = Mutex(State(entries: entries))
        self.standIn = standIn
        self.cueAtStart = cueAtStart
    }

    /// What each skipped entry had produced and never sent.
    var skippedUnsent: [[MediaPacket]] { state.withLock { $0.skippedUnsent } }

    /// The next entry is still opening until ``open()``.
    func holdNextEntry() { state.withLock { $0.ready = false } }

    /// The next entry is open: whoever asked is told.
    func open() {
        let whenReady = state.withLock { state -> (@Sendable () -> Void)? in
            state.ready = true
            defer { state.whenReady = nil }
            return state.whenReady
        }
        whenReady?()
    }

    func nextInputIsReady(after ended: any MediaInput, whenReady: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            if !state.ready { state.whenReady = whenReady }
            return state.ready
        }
    }

    func nextInput() -> (any MediaInput)? {
        state.withLock { $0.entries.isEmpty ? nil : $0.entries.removeFirst() }?.make()
    }

    func cues(forInputStartingAt start: Int64) -> [AdCue] { cueAtStart(start) }
    func inputSkipped(_ input: any MediaInput, unsent: [MediaPacket]) { state.withLock { $0.skippedUnsent.append(unsent) } }
    func inputFailed(_ input: any MediaInput, _ error: LivePushError) -> (any MediaInput)? { standIn?.make() }
    var inputsMayWait: Bool { false }
}

/// What the switcher's driver did, recorded for the test.
struct SwitcherRun {
    /// Every packet delivered, with when (on the manual clock) it was delivered.
    var delivered: [(packet: MediaPacket, at: MediaTime)] = []
    /// Sequence headers, with the packet each went out before.
    var headers: [(header: MediaPacket, before: MediaPacket)] = []
    var cues: [AdCue] = []
    var waits: [MediaTime?] = []
    var roomWaits = 0
    var finished = false
    var idle = false
    var awaitingNextInput = false

    var video: [MediaPacket] { delivered.map(\.packet).filter { $0.kind == .video } }
    var audio: [MediaPacket] { delivered.map(\.packet).filter { $0.kind == .audio } }

    /// The packets of input `name`, in the order they went out.
    func packets(of name: UInt8, _ kind: MediaPacket.Kind) -> [MediaPacket] {
        delivered.map(\.packet).filter { $0.kind == kind && $0.data.first == name }
    }

    /// Which inputs' video went out, in runs: [(input, frames)].
    var videoRuns: [(input: UInt8, frames: Int)] {
        var runs: [(input: UInt8, frames: Int)] = []
        for packet in video {
            if let last = runs.last, last.input == packet.data[0] { runs[runs.count - 1].frames += 1 } else { runs.append((packet.data[0], 1)) }
        }
        return runs
    }

    /// The largest step between successive decode times of a track (µs).
    static func largestStep(_ packets: [MediaPacket]) -> Int64 {
        zip(packets, packets.dropFirst()).map { $1.dts - $0.dts }.max() ?? 0
    }
}

extension Switcher {
    /// A command, as the producer passes it on (every command starts a new release batch).
    mutating func send(_ command: SwitchCommand) throws {
        commandsArrived()
        try apply(command)
    }

    /// Drives the switcher as a push's producer would, with no outputs and no sleeps: a wait
    /// for a due time moves `clock` there; a pause's open wait, an idle slate or `packets`
    /// deliveries end the run (the test then sends a command and runs again).
    mutating func run(_ clock: ManualMonotonicClock, packets limit: Int = .max, stopping: Bool = false,
                      hasRoom: () -> Bool = { true }, into run: inout SwitcherRun) throws {
        var count = 0
        while count < limit {
            switch try next(stopping: { stopping }, hasRoom: hasRoom) {
            case .deliver(let packet, let header, let cues):
                run.cues += cues
                if let header { run.headers.append((header, packet)) }
                run.delivered.append((packet, clock.now()))
                count += 1
            case .again:
                continue
            case .wait(let until):
                run.waits.append(until)
                guard let until else { return }
                clock.advance(to: until)
            case .waitForRoom:
                run.roomWaits += 1
                return
            case .idle:
                run.idle = true
                return
            case .awaitingNextInput:
                run.awaitingNextInput = true
                return
            case .finished(let cues):
                run.cues += cues
                run.finished = true
                return
            }
        }
    }

    static func scripted(_ input: any MediaInput, pacing: PushConfig.Pacing = .asFastAsPossible, looping: PushConfig.Looping = .once,
                         slate: (any MediaInput)? = nil, sequence: (any InputSequence)? = nil, breaks: BreakSetup? = nil,
                         nextInputReady: @escaping @Sendable () -> Void = {}, pictureConfiguration: [UInt8]? = nil,
                         clock: ManualMonotonicClock) -> Switcher {
        let setup = Setup(pacing: pacing, looping: looping, slate: slate, sequence: sequence, breaks: breaks,
                          pictureConfiguration: pictureConfiguration, pacingGate: PacingGate(earlyRelease: 0), nextInputReady: nextInputReady)
        return Switcher(input: input, info: input.info, setup: setup, clock: clock)
    }
}
