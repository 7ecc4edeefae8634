import Foundation
import XCTest

/// WHIP for services: trickle ICE (RFC 9725 §4.3, RFC 8840). The offer is POSTed at once, with
/// no candidate; the candidates, all gathered afterwards, reach the endpoint by PATCH, typed
/// `application/trickle-ice-sdpfrag`, with the session's ETag in `If-Match`, then an
/// `a=end-of-candidates`. The other WHIP tests' endpoint answers PATCH with 405: there the
/// push goes on without trickle.
final class WHIPTrickleTests: NginxTestCase {
    private let clip = PlayoutClip(name: "T", color: "lime", luma: 145, tone: 660)

    func testLateCandidatesArriveByPatchAndMediaFollows() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 6)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-trickle", extra: ["--trickle"])
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-trickle", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(45))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()

        let lines = endpoint.process.output
        let session = try XCTUnwrap(lines.first { $0.hasPrefix("POSTED ") }?.split(separator: " ").last.map(String.init), "\(lines)")
        func json(_ line: String) -> [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(line.split(separator: " ", maxSplits: 2)[2].utf8)) as? [String: Any]
        }
        let offer = try XCTUnwrap(lines.first { $0.hasPrefix("OFFER ") }.flatMap(json), "\(lines)")
        let patches = lines.filter { $0.hasPrefix("PATCH ") }.compactMap(json)
        print("WHIPTrickleTests: offer \(offer), patches \(patches), endpoint \(summary)")
        XCTAssertEqual(offer["candidates"] as? Int, 0, "the offer went at once, before any candidate")
        XCTAssertFalse(lines.contains { $0.hasPrefix("PATCH-REFUSED") }, "every If-Match was the ETag: \(lines)")
        XCTAssertFalse(patches.isEmpty, "the late candidates came by PATCH: \(lines)")
        for patch in patches {
            XCTAssertEqual(patch["contentType"] as? String, "application/trickle-ice-sdpfrag")
            XCTAssertEqual(patch["ifMatch"] as? String, "\"\(session)\"", "the session's ETag")
            XCTAssertEqual(patch["ufrag"] as? Bool, true, "with the ICE credentials")
        }
        let trickled = patches.reduce(0) { $0 + ($1["candidates"] as? Int ?? 0) }
        XCTAssertGreaterThan(trickled, 0, "candidates gathered after the offer: \(patches)")
        XCTAssertEqual(patches.filter { $0["end"] as? Bool == true }.count, 1, "one end-of-candidates, last: \(patches)")
        XCTAssertEqual(patches.last?["end"] as? Bool, true)

        XCTAssertTrue(lines.contains { $0.hasPrefix("ICE ") && ($0.hasSuffix("completed") || $0.hasSuffix("connected")) }, "\(lines)")
        XCTAssertGreaterThanOrEqual(summary["video"] as? Int ?? 0, 25, "media arrived: \(summary)")
        XCTAssertGreaterThan(summary["audio"] as? Int ?? 0, 0, "\(summary)")
    }

    /// ICE restart by PATCH (RFC 9725 §4.4). The endpoint's relay cuts the path 3 s into a
    /// real-time push: the endpoint's receiver reports stop moving, the output takes the path
    /// for lost (3 s), waits the restart bound (2 s), restarts libnice's stream and PATCHes the
    /// new credentials with `If-Match: "*"`; the endpoint answers with its own, and the relay
    /// lets datagrams through again from then on. libnice checks under the new credentials (the
    /// endpoint answers only those now), and the media resumes over the same session: one POST,
    /// pictures decoded after the restore, no failure.
    func testAnICERestartByPatchBringsTheMediaBackWithoutANewPost() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 15)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-restart",
                                                   extra: ["--trickle", "--restart", "--relay", "--cut-at", "3"])
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-restart", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        let lines = endpoint.process.output
        print("WHIPTrickleTests(restart): \(lines.filter { !$0.hasPrefix("PATCH ") }), endpoint \(summary)")
        XCTAssertEqual(lines.filter { $0.hasPrefix("POSTED ") }.count, 1, "one session, no new POST: \(lines)")
        let cut = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("CUT ") }, "the path was cut: \(lines)")
        let restart = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("RESTART ") }, "an ICE restart came by PATCH: \(lines)")
        let restored = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("RESTORED ") }, "\(lines)")
        XCTAssertTrue(cut < restart && restart < restored, "cut, restart, restored: \(lines)")
        XCTAssertFalse(lines.contains { $0.hasPrefix("RESTART-REFUSED") }, "new credentials each time: \(lines)")
        XCTAssertGreaterThan(summary["restartChecks"] as? Int ?? 0, 0, "libnice checked under the new credentials: \(summary)")
        XCTAssertGreaterThanOrEqual(summary["videoAfterRestore"] as? Int ?? 0, 25, "pictures decoded after the restore: \(summary)")
        XCTAssertFalse(cli.output.contains { $0.contains("\"connectFailed\"") || $0.contains("\"connectionLost\"") || $0.contains("\"reconnectStarted\"") },
                       "no failure, no reconnect: \(cli.output.suffix(5))")
    }

    /// The same restart after a real cut: the endpoint in a namespace of its own, the veth link
    /// between the two set down for 7 s and up again. A cut link takes the signalling with it,
    /// so the first restart's PATCH finds no route and is tried again 2 s later; once the link
    /// is back, one gets through and the media resumes in the same session: one POST.
    func testAnICERestartAfterTheLinkIsCutAndRestoredKeepsTheSession() async throws {
        let namespace = try NetworkNamespace(peer: true)
        let path = try clip.make(in: dir, seconds: 18)
        let endpoint = try await startWHIPEndpoint(in: namespace, inPeer: true, token: "token-cut", extra: ["--trickle", "--restart"])
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-cut", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let connected = await endpoint.process.awaitLine(timeout: .seconds(30)) {
            $0.hasPrefix("ICE ") && ($0.hasSuffix("completed") || $0.hasSuffix("connected"))
        }
        XCTAssertNotNil(connected, "ICE connected across the veth: \(endpoint.process.output)")
        // When to cut and for how long are the test's inputs, not measurements.
        try await Task.sleep(for: .seconds(2))
        try namespace.setLink(up: false)
        try await Task.sleep(for: .seconds(7))
        try namespace.setLink(up: true)
        let restart = await endpoint.process.awaitLine(timeout: .seconds(20)) { $0.hasPrefix("RESTART ") }
        XCTAssertNotNil(restart, "an ICE restart came by PATCH once the link was back: \(endpoint.process.output)")
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        let lines = endpoint.process.output
        print("WHIPTrickleTests(link cut): \(lines.filter { !$0.hasPrefix("PATCH ") }), endpoint \(summary)")
        XCTAssertEqual(lines.filter { $0.hasPrefix("POSTED ") }.count, 1, "one session, no new POST: \(lines)")
        XCTAssertGreaterThan(summary["restartChecks"] as? Int ?? 0, 0, "libnice checked under the new credentials: \(summary)")
        XCTAssertGreaterThanOrEqual(summary["videoAfterRestore"] as? Int ?? 0, 25, "pictures decoded after the restart: \(summary)")
        XCTAssertFalse(cli.output.contains { $0.contains("\"connectFailed\"") || $0.contains("\"connectionLost\"") || $0.contains("\"reconnectStarted\"") },
                       "no failure, no reconnect: \(cli.output.filter { !$0.contains("\"stats\"") })")
    }

    /// RFC 9725 §4.3.1: an endpoint that answers the first PATCH with 405 does no trickle ICE.
    /// It gets no second PATCH, the push does not fail, and ICE connects without the
    /// candidates (the endpoint learns our address from our checks).
    func testAnEndpointWithoutTrickleGetsOnePatchAndTheMediaStillArrives() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 4)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-no-trickle")
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-no-trickle", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(45))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()
        let refused = endpoint.process.output.filter { $0.hasPrefix("PATCH-405 ") }
        print("WHIPTrickleTests(no trickle): \(refused), endpoint \(summary)")
        XCTAssertEqual(refused.count, 1, "one PATCH, then none: \(endpoint.process.output)")
        XCTAssertTrue(refused.first?.hasSuffix(" application/trickle-ice-sdpfrag") ?? false, "\(refused)")
        XCTAssertGreaterThanOrEqual(summary["video"] as? Int ?? 0, 25, "media arrived: \(summary)")
        XCTAssertFalse(cli.output.contains { $0.contains("\"connectFailed\"") }, "no failure: \(cli.output)")
    }
}
