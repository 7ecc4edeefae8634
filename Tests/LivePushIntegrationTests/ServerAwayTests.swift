import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// 200 channels start while their server is away, as after a data-centre power cut where the
/// process comes back before nginx. They must wait without a thread each, say they are
/// reconnecting (not failed) with their last error and next attempt, and all publish once
/// nginx comes up on their port.
final class ServerAwayTests: XCTestCase {
    private let token = "away-token"
    private let channelCount = 200

    func testChannelsWaitForAServerThatIsAwayAtStartAndAllPublishWhenItComesUp() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "server-away")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        try PlayoutClip.a.make(in: dir, seconds: 4, size: "160x120")
        let port = try NginxRTMPServer.freeLoopbackPort()
        let channels = (0..<channelCount).map { index in
            #"{"id": "c\#(index)", "input": "A.mp4", "loop": "forever", "outputs": ["rtmp://127.0.0.1:\#(port)/live/c\#(index)"]}"#
        }
        let path = dir.appendingPathComponent("channels.json").path
        try #"{"control": "127.0.0.1:0", "token": "\#(token)", "channels": [\#(channels.joined(separator: ", "))]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)

        let started = ContinuousClock.now
        let cli = try RunningCLI(["channels", path, "--log-format", "json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let threads = ThreadSampler(pid: cli.processIdentifier)
        defer { threads.stop() }
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.standardError.suffix(2000))")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)

        // Every channel's first connect was refused: all wait to try again, none has failed.
        var states: [String: Double] = [:]
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            try await Task.sleep(for: .milliseconds(250))
            states = try await channelStates(base)
        } while states["reconnecting"] != Double(channelCount) && ContinuousClock.now < deadline
        XCTAssertEqual(states["reconnecting"], Double(channelCount), "\(states)")
        XCTAssertEqual(states["failed"], 0, "\(states)")
        let one = try await request(base + "/channels/c7")
        let channel = try XCTUnwrap(one.json as? [String: Any], one.text)
        XCTAssertEqual(channel["state"] as? String, "reconnecting")
        XCTAssertEqual((channel["error"] as? [String: Any])?["name"] as? String, "connectionRefused", one.text)
        let next = try XCTUnwrap(channel["nextAttemptIn"] as? Double, one.text)
        XCTAssertTrue((0...30).contains(next), "next attempt in \(next) s")

        // The server comes up 15 s after the channels started.
        try await Task.sleep(for: .seconds(15) - (ContinuousClock.now - started))
        let server = try NginxRTMPServer(port: port, workerConnections: 1024)
        defer { server.stop() }
        let upAt = ContinuousClock.now
        // Every channel tries again when its back-off says (retries double, up to 30 s): the
        // latest of those, read now, plus time for 200 connects on a busy machine, bounds the wait.
        let all = try await request(base + "/channels").json as? [[String: Any]] ?? []
        let latest = all.compactMap { $0["nextAttemptIn"] as? Double }.max() ?? 30
        let allowed = Duration.seconds(latest) + .seconds(20)
        var published = Set<String>()
        while published.count < channelCount && ContinuousClock.now - upAt < allowed {
            try await Task.sleep(for: .milliseconds(250))
            published = Self.publishedNames(server.errorLog)
        }
        let took = ContinuousClock.now - upAt
        XCTAssertEqual(published.count, channelCount,
                       "\(channelCount - published.count) channels had not published \(allowed) after nginx came up "
                       + "(the latest next attempt was \(latest) s away)")
        print("ServerAwayTests: \(published.count) channels published \(took) after nginx came up")
        let after = try await channelStates(base)
        XCTAssertEqual(after["failed"], 0, "\(after)")

        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError.suffix(2000).description)
        threads.stop()
        print("ServerAwayTests: at most \(threads.most) threads, start to exit")
        XCTAssertGreaterThan(threads.samples, 10, "the thread count was sampled through the test")
        XCTAssertLessThanOrEqual(threads.most, 64, "the process had \(threads.most) threads at most")
    }

    /// `livepush_channels{state="…"}` from `/metrics`.
    private func channelStates(_ base: String) async throws -> [String: Double] {
        let metrics = try await request(base + "/metrics").text
        var states: [String: Double] = [:]
        for line in metrics.split(separator: "\n") where line.hasPrefix("livepush_channels{") {
            guard let open = line.range(of: "state=\""), let close = line[open.upperBound...].firstIndex(of: "\""),
                  let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            states[String(line[open.upperBound..<close])] = value
        }
        return states
    }

    private func request(_ url: String) async throws -> (json: Any?, text: String) {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try? JSONSerialization.jsonObject(with: data), String(decoding: data, as: UTF8.self))
    }

    /// The stream names nginx accepted a publish for (its error log at `info`).
    private static func publishedNames(_ log: String) -> Set<String> {
        var names = Set<String>()
        for line in log.split(separator: "\n") {
            guard let range = line.range(of: "publish: name='") else { continue }
            let rest = line[range.upperBound...]
            if let end = rest.firstIndex(of: "'") { names.insert(String(rest[..<end])) }
        }
        return names
    }
}

/// Samples a process's thread count (`Threads:` in /proc/PID/status) every 100 ms until stopped.
final class ThreadSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var highest = 0
    private var count = 0
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                   let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }),
                   let threads = Int(line.split(separator: "\t").last ?? "") {
                    lock.withLock {
                        highest = max(highest, threads)
                        count += 1
                    }
                }
                usleep(100_000)
            }
            done.signal()
        }
    }

    var most: Int { lock.withLock { highest } }
    var samples: Int { lock.withLock { count } }

    func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { running = false }
            return running
        }
        if wasRunning { done.wait() }
    }
}
