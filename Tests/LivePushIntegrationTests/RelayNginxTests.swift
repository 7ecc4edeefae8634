import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The loopback's relay in front of a real nginx must behave as a TCP path does, or the tests
/// that look at what nginx received once a push through it ended (``FastResumeNginxTests``)
/// look before nginx has it.
final class RelayNginxTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
    }

    /// A client that ends its push gracefully waits for the server to end its side (it reads
    /// until the server closes), so that when the push is over the server has read everything.
    /// Through the relay it must be the same: the relay passes the client's FIN on after the
    /// data and keeps the connection until nginx closes. (It once closed at the client's FIN,
    /// and the push ended while nginx had read nothing of it.)
    func testAGracefulEndWaitsThroughTheRelayForTheServerToReadEverything() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer()
        self.nginx = nginx
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)", faults: []))
        self.loopback = loopback
        let port = try loopback.start()
        let loopbackEvents = loopback.makeEventStream()

        // One pass of the sample (about 270 KB): well within the kernel buffers of a frozen path
        // (the relay's socket alone held over 500 KB for nginx when measured with `ss`).
        let source = GatedMediaInput(try MediaInputFactory.open(path: TestMedia.path(.h264AAC)))
        let config = PushHelpers.fastConfig()
        let pusher = LivePusher(config: config)
        let events = pusher.events(), published = pusher.events(), stopped = pusher.events()
        let start = ContinuousClock.now
        try pusher.start(source: source, url: "rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/tail")
        async let pushed = PushHelpers.collect(pusher, events, start: start, timeout: .seconds(60))

        // nginx stops reading once it has accepted the publish, before the first packet is read.
        _ = try await PushHelpers.awaitEvent(published) { if case .pushStarted = $0 { true } else { false } }
        nginx.freeze()
        source.open()
        // The whole stream fits in the kernel buffers on the way, so the client ends its side
        // while nginx has read none of it. (A relay that closes at once reports a close.)
        _ = try await PushHelpers.awaitEvent(loopbackEvents, timeout: .seconds(30)) {
            switch $0 {
            case .clientFinishedSending, .closed: true
            default: false
            }
        }
        // While nginx reads nothing, the push waits (up to its 2 s lingering bound).
        let endedWhileFrozen = (try? await PushHelpers.awaitEvent(stopped, timeout: .milliseconds(500)) {
            if case .stopped = $0 { true } else { false }
        }) != nil
        nginx.thaw()
        XCTAssertFalse(endedWhileFrozen, "the push ended while nginx had not read its end")
        let run = try await pushed
        XCTAssertNil(run.error)

        // nginx closed its side after the last message, so the recording is whole by now: no
        // waiting for its completion marker.
        let probe = try FFProbe.run(nginx.recordingPath(stream: "tail"))
        XCTAssertEqual(probe.videoPackets.count, 100, "every frame reached nginx")
        XCTAssertEqual(Int(run.stats.videoFramesSent), 100)
    }
}

/// A file source whose first read waits until the test opens it: the push connects and
/// publishes, and its media starts only when the test says.
private final class GatedMediaInput: InterruptibleInput, @unchecked Sendable {
    private let source: any MediaInput
    private let gate = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var isOpen = false
    private var interrupted = false

    init(_ source: any MediaInput) { self.source = source }

    func open() { gate.signal() }

    var info: StreamInfo { source.info }
    var start: MediaStart? { source.start }
    var readsWithoutWaiting: Bool { false }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        let mustWait = lock.withLock { !isOpen }
        if mustWait {
            gate.wait()
            let wasInterrupted = lock.withLock { isOpen = true; return interrupted }
            if wasInterrupted { return nil }
        }
        return try source.nextPacket()
    }

    func rewind() throws(LivePushError) { try source.rewind() }
    func suspend() throws(LivePushError) -> [MediaPacket] { try source.suspend() }
    func setVideoBitrate(_ bitsPerSecond: Int) { source.setVideoBitrate(bitsPerSecond) }
    func requestKeyframe(atOrAfter time: Int64) { source.requestKeyframe(atOrAfter: time) }

    func interrupt() {
        lock.withLock { interrupted = true }
        gate.signal()
        source.interrupt()
    }
}
