import Foundation
import XCTest

/// The loopback's SRT faults (`livepush loopback --srt-listen`), one test per fault: `srt-live-transmit`
/// listens behind the relay, `livepush push --json` calls through it, and each test checks the
/// coded events LivePush reports and, where the stream gets through, what the listener wrote.
/// Every process is stopped at the end of its test; each test is bounded (well under 30 s).
final class SRTFaultTests: XCTestCase {
    private var dir: URL!
    private var processes: [RunningCLI] = []
    private var listeners: [SRTListener] = []

    override func setUpWithError() throws {
        try XCTSkipUnless(SRTListener.isAvailable, "srt-live-transmit (srt-tools) not installed")
        dir = try TestMedia.makeTemporaryDirectory(prefix: "srt-fault")
    }

    override func tearDown() {
        for process in processes where process.isRunning {
            process.interrupt()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        processes = []
        for listener in listeners { listener.stop() }
        listeners = []
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    // MARK: - refuse

    /// The caller's handshakes never reach the listener: the connect times out after its
    /// connect timeout as `connectFailed` (0x30020903), as for a listener that is not there at all.
    /// The listener is fine: the next caller (session 2) gets through.
    func testRefuseIsAConnectFailureAfterTheConnectTimeout() async throws {
        let listener = try listen()
        let relay = try await startRelay(to: listener, faults: ["refuse@conn=1"])
        let clip = try makeClip(seconds: 2)

        let refused = try run(["push", clip, "srt://127.0.0.1:\(relay.port)?connect_timeout=1500", "--retry-count", "0", "--json"])
        let exit = await refused.awaitExit(timeout: .seconds(15))
        XCTAssertNotNil(exit)
        XCTAssertNotEqual(exit, 0)
        let failed = try XCTUnwrap(event("connectFailed", in: refused), refused.output.joined(separator: "\n"))
        let error = try XCTUnwrap(failed["error"] as? [String: Any])
        XCTAssertEqual(error["hex"] as? String, "0x30020903")
        XCTAssertTrue((error["message"] as? String ?? "").contains("no SRT answer"), "\(error)")
        let at = try XCTUnwrap(failed["t"] as? Double)
        XCTAssertGreaterThanOrEqual(at, 1.4, "not before the connect timeout")
        XCTAssertLessThan(at, 6)
        let refusal = await relay.cli.awaitLine(timeout: .seconds(5)) { $0 == "session 1: fault refuse@conn=1" }
        XCTAssertNotNil(refusal, relay.cli.output.joined(separator: "\n"))
        XCTAssertEqual(try fileSize(listener.outputPath), 0, "the listener heard nothing")
        print("SRTFaultTests refuse: connectFailed at \(at) s: \(error["message"] ?? "")")

        let next = try run(["push", clip, "srt://127.0.0.1:\(relay.port)", "--json"])
        let nextExit = await next.awaitExit(timeout: .seconds(15))
        XCTAssertEqual(nextExit, 0, next.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 5), "the listener saw the second caller close")
        let received = try ReceivedTS(listener.outputPath)
        XCTAssertEqual(received.videoFrames, 50, "the second caller's every frame")
        let secondEnded = await relay.cli.awaitLine(timeout: .seconds(5)) { $0.hasPrefix("session 2: ended (the caller closed the connection)") }
        XCTAssertNotNil(secondEnded, relay.cli.output.joined(separator: "\n"))
    }

    // MARK: - drop

    /// Nothing more goes through, either way, 2 s into the first session: SRT's peer idle timeout
    /// breaks the connection (`connectionLost`, 0x3002090f), the reconnect makes a new session
    /// that the rule leaves alone, and the listener gets the stream again until its end.
    func testDropIsALostConnectionAndTheReconnectGetsThrough() async throws {
        let listener = try listen(acceptsAgain: true)
        let relay = try await startRelay(to: listener, faults: ["drop@conn=1,after=2s"])
        let clip = try makeClip(seconds: 12)

        let push = try run(["push", clip, "srt://127.0.0.1:\(relay.port)", "--json"])
        let exit = await push.awaitExit(timeout: .seconds(25))
        XCTAssertEqual(exit, 0, push.standardError)

        let lost = try XCTUnwrap(event("connectionLost", in: push), push.output.joined(separator: "\n"))
        XCTAssertEqual((lost["error"] as? [String: Any])?["hex"] as? String, "0x3002090f")
        let lostAt = try XCTUnwrap(lost["t"] as? Double)
        let back = try XCTUnwrap(event("reconnectSucceeded", in: push), push.output.joined(separator: "\n"))
        let backAt = try XCTUnwrap(back["t"] as? Double)
        XCTAssertGreaterThanOrEqual(lostAt - 2, 2.9, "not before the peer idle timeout (3 s)")
        XCTAssertLessThan(lostAt - 2, 8)
        XCTAssertGreaterThan(backAt, lostAt)
        XCTAssertNil(event("connectFailed", in: push))
        let relayLog = relay.cli.output.joined(separator: "\n")
        XCTAssertTrue(relayLog.contains("session 1: fault drop@conn=1,after=2s"), relayLog)
        let secondEnded = await relay.cli.awaitLine(timeout: .seconds(5)) { $0.hasPrefix("session 2: ended (the caller closed the connection)") }
        XCTAssertNotNil(secondEnded, relay.cli.output.joined(separator: "\n"))

        listener.stop()
        let received = try ReceivedTS(listener.outputPath)
        let probe = try FFProbe.run(listener.outputPath)
        let times = probe.videoPackets.compactMap(\.ptsTime)
        let span = (times.max() ?? 0) - (times.min() ?? 0)
        print("SRTFaultTests drop: connectionLost \(lostAt - 2) s after the drop, reconnected at \(backAt) s; "
              + "received \(received.videoFrames) video frames spanning \(span) s; relay: \(relayLog)")
        XCTAssertGreaterThan(received.videoFrames, 75, "frames from after the reconnect")
        XCTAssertLessThan(received.videoFrames, 300, "what the dead path lost is lost")
        XCTAssertGreaterThan(span, 11, "the stream goes on to its end after the reconnect")
    }

    // MARK: - stall

    /// 2 s of nothing either way, then the path is back: shorter than the peer idle timeout, so
    /// the connection rides it out (no `connectionLost`, no reconnect); SRT retransmits what
    /// is still in time and the listener gets the stream to its end.
    func testAShortStallIsRiddenOutWithoutAReconnect() async throws {
        let listener = try listen()
        let relay = try await startRelay(to: listener, faults: ["stall=2s@after=3s"])
        let clip = try makeClip(seconds: 10)

        let push = try run(["push", clip, "srt://127.0.0.1:\(relay.port)", "--json"])
        let exit = await push.awaitExit(timeout: .seconds(25))
        XCTAssertEqual(exit, 0, push.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 5), "one connection, closed by the caller at the end")

        XCTAssertNil(event("connectionLost", in: push))
        XCTAssertNil(event("reconnectStarted", in: push))
        let relayLog = relay.cli.output.joined(separator: "\n")
        XCTAssertTrue(relayLog.contains("session 1: fault stall=2s@after=3s"), relayLog)
        XCTAssertTrue(relayLog.contains("session 1: stall=2s@after=3s over, forwarding again"), relayLog)
        XCTAssertFalse(relayLog.contains("session 2"), relayLog)
        let link = try srtStats(push)
        XCTAssertGreaterThan(link["packetsRetransmitted"] as? Int ?? 0, 0, "\(link)")

        let received = try ReceivedTS(listener.outputPath)
        let probe = try FFProbe.run(listener.outputPath)
        let times = probe.videoPackets.compactMap(\.ptsTime)
        let span = (times.max() ?? 0) - (times.min() ?? 0)
        let network = push.output.filter { $0.contains("\"group\":\"network\"") }
        print("SRTFaultTests stall: received \(received.videoFrames) of 250 video frames spanning \(span) s; "
              + "srt \(link); network events: \(network)")
        XCTAssertGreaterThan(received.videoFrames, 250 - 2 * 25 - 25, "at most the stall and SRT's drop delay lost")
        XCTAssertGreaterThan(span, 9, "the stream goes on after the stall")
    }

    /// A stall longer than the time SRT takes to find a silent peer broken is a lost
    /// connection, as `drop` is; the reconnect is a new session and gets through.
    func testAStallLongerThanThePeerIdleTimeoutIsAReconnect() async throws {
        let listener = try listen(acceptsAgain: true)
        let relay = try await startRelay(to: listener, faults: ["stall=8s@conn=1,after=2s"])
        let clip = try makeClip(seconds: 11)

        let push = try run(["push", clip, "srt://127.0.0.1:\(relay.port)", "--json"])
        let exit = await push.awaitExit(timeout: .seconds(25))
        XCTAssertEqual(exit, 0, push.standardError)
        let lost = try XCTUnwrap(event("connectionLost", in: push), push.output.joined(separator: "\n"))
        XCTAssertEqual((lost["error"] as? [String: Any])?["hex"] as? String, "0x3002090f")
        XCTAssertNotNil(event("reconnectSucceeded", in: push), push.output.joined(separator: "\n"))
        let relayLog = relay.cli.output.joined(separator: "\n")
        XCTAssertTrue(relayLog.contains("session 1: fault stall=8s@conn=1,after=2s"), relayLog)
        XCTAssertTrue(relayLog.contains("session 2: caller"), relayLog)
        listener.stop()
        let received = try ReceivedTS(listener.outputPath)
        print("SRTFaultTests long stall: connectionLost at \(lost["t"] ?? ""), received \(received.videoFrames) video frames")
        XCTAssertGreaterThan(received.videoFrames, 60, "frames from after the reconnect")
    }

    // MARK: - loss

    /// 10 % of the data packets lost at random: SRT retransmits them, the listener gets every
    /// frame and the output's SRT figures count the retransmissions.
    func testLossIsRetransmittedAndEveryFrameArrives() async throws {
        let listener = try listen()
        let relay = try await startRelay(to: listener, faults: ["loss=10%"])
        let clip = try makeClip(seconds: 8)

        // 300 ms of latency: time for a retransmission of a retransmission on a busy machine.
        let push = try run(["push", clip, "srt://127.0.0.1:\(relay.port)?latency=300000", "--json"])
        let exit = await push.awaitExit(timeout: .seconds(25))
        XCTAssertEqual(exit, 0, push.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 5), "the listener saw the connection close")
        XCTAssertNil(event("connectionLost", in: push))

        let link = try srtStats(push)
        let retransmitted = link["packetsRetransmitted"] as? Int ?? 0
        XCTAssertGreaterThan(retransmitted, 0, "\(link)")
        XCTAssertGreaterThan(link["packetsLost"] as? Int ?? 0, 0, "\(link)")
        let ended = await relay.cli.awaitLine(timeout: .seconds(5)) { $0.hasPrefix("session 1: ended") } ?? ""
        XCTAssertFalse(ended.hasSuffix(" 0 dropped by faults"), ended)

        let received = try ReceivedTS(listener.outputPath)
        print("SRTFaultTests loss: srt \(link); \(ended); received \(received.videoFrames) video / \(received.audioFrames) audio")
        // Every frame, unless SRT itself gave up on a packet as too late for the 300 ms latency
        // (a loaded machine can hold a retransmission that long): each such packet costs at most
        // the two frames whose bytes it carries, and SRT counts it.
        let tooLate = link["packetsDropped"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(received.videoFrames, 200 - 2 * tooLate, "every frame of 8 s at 25 fps that SRT did not drop")
        XCTAssertLessThanOrEqual(received.videoFrames, 200)
        XCTAssertEqual(received.decodeErrors, "", "the stream decodes without an error")
    }

    // MARK: - Helpers

    private struct Relay {
        let cli: RunningCLI
        let port: Int
    }

    private func listen(acceptsAgain: Bool = false) throws -> SRTListener {
        let listener = try SRTListener(in: dir, bound: 40, acceptsAgain: acceptsAgain)
        listeners.append(listener)
        return listener
    }

    private func run(_ arguments: [String]) throws -> RunningCLI {
        let cli = try RunningCLI(arguments)
        processes.append(cli)
        return cli
    }

    /// `livepush loopback --srt-listen 0` in front of `listener`; its port from the banner.
    private func startRelay(to listener: SRTListener, faults: [String]) async throws -> Relay {
        let cli = try run(["loopback", "--srt-listen", "0", "--srt-upstream", "127.0.0.1:\(listener.port)"]
                          + faults.flatMap { ["--fault", $0] })
        let banner = await cli.awaitLine(timeout: .seconds(10)) { $0.hasPrefix("loopback listening on srt://") }
        let line = try XCTUnwrap(banner, "the relay started: \(cli.standardError)")
        let address = line.dropFirst("loopback listening on srt://".count).prefix { $0 != "," }
        let port = try XCTUnwrap(address.split(separator: ":").last.flatMap { Int($0) }, line)
        return Relay(cli: cli, port: port)
    }

    /// A clip with pictures that change (a few SRT packets per frame) and a tone.
    private func makeClip(seconds: Int) throws -> String {
        let path = dir.appendingPathComponent("clip-\(seconds)s.mp4").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=44100:duration=\(seconds)",
            "-ac", "2", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac",
            "-shortest", path,
        ], timeout: 60)
        XCTAssertTrue(result.succeeded, result.summary)
        return path
    }

    /// The first JSON line of `cli` whose event is `name`.
    private func event(_ name: String, in cli: RunningCLI) -> [String: Any]? {
        for line in cli.output where line.contains("\"event\":\"\(name)\"") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { return object }
        }
        return nil
    }

    /// The SRT figures of the first output in the final statistics (the `stopped` event).
    private func srtStats(_ cli: RunningCLI) throws -> [String: Any] {
        let stopped = try XCTUnwrap(event("stopped", in: cli), cli.output.joined(separator: "\n"))
        let outputs = try XCTUnwrap((stopped["stats"] as? [String: Any])?["outputs"] as? [[String: Any]], "\(stopped)")
        return try XCTUnwrap(outputs.first?["srt"] as? [String: Any], "\(outputs)")
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }
}
