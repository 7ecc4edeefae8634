import Foundation
import XCTest

/// WHIP for services: simulcast (RFC 8853). A WHIP output given a ladder offers one video
/// m-line with `a=simulcast:send` and one `a=rid` per rendition, and sends each rendition with
/// its RID. aiortc, the endpoint, has no simulcast: it ignores the lines; `--one-layer` makes
/// it read the RIDs, count them, and take the layer r0 only, which must decode.
final class WHIPSimulcastTests: NginxTestCase {
    private let clip = PlayoutClip(name: "S", color: "blue", luma: 41, tone: 440)

    /// A 10 s push with `--output-video 0=640x360@800 --output-video 0=320x180@300`: the offer
    /// the endpoint received has `a=simulcast:send r0;r1`, `a=rid:r0 send` and `a=rid:r1 send`,
    /// and the RID and mid header extensions; both RIDs and the mid are on the packets; the top
    /// layer (r0, 640x360) decodes at least 90 % of its frames.
    func testALadderIsOfferedAsSimulcastAndOneLayerDecodes() async throws {
        let namespace = try NetworkNamespace()
        let path = try clip.make(in: dir, seconds: 10)
        let endpoint = try await startWHIPEndpoint(in: namespace, token: "token-simulcast", extra: ["--one-layer"])
        defer { if endpoint.process.isRunning { kill(endpoint.process.processIdentifier, SIGKILL) } }
        let cli = try runInNamespace(namespace, ["push", path, endpoint.url, "--whip-token", "token-simulcast", "--json",
                                                 "--output-video", "0=640x360@800", "--output-video", "0=320x180@300"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.standardError)
        let summary = try await endpoint.process.awaitSummary()

        let offer = try XCTUnwrap(endpoint.process.output.first { $0.hasPrefix("OFFER ") }, "\(endpoint.process.output)")
        let described = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(offer.split(separator: " ", maxSplits: 2)[2].utf8))
            as? [String: Any])
        print("WHIPSimulcastTests: offer \(described), endpoint \(summary)")
        XCTAssertEqual(described["simulcast"] as? [String], ["a=simulcast:send r0;r1"], "the top rendition first")
        XCTAssertEqual(described["rid"] as? [String], ["a=rid:r0 send", "a=rid:r1 send"])
        let extmap = described["extmap"] as? [String] ?? []
        XCTAssertTrue(extmap.contains { $0.hasSuffix(" urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id") }, "\(extmap)")
        XCTAssertTrue(extmap.contains { $0.hasSuffix(" urn:ietf:params:rtp-hdrext:sdes:mid") }, "\(extmap)")

        let stats = try XCTUnwrap(cli.stoppedStats, "\(cli.output.suffix(3))")
        let renditions = stats["renditions"] as? [[String: Any]] ?? []
        XCTAssertEqual(renditions.compactMap { $0["video"] as? String },
                       ["640x360@800 constrained baseline", "320x180@300 constrained baseline"], "two encodes")
        let whip = try XCTUnwrap(Self.stoppedOutputs(cli).first { $0["kind"] as? String == "whip" }, "\(cli.output.suffix(3))")
        let sentPerLayer = Double(whip["videoFramesSent"] as? Int ?? 0) / 2
        XCTAssertGreaterThanOrEqual(sentPerLayer, 0.9 * 250, "both layers were sent whole: \(whip)")
        let pictures = summary["video"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(Double(pictures), 0.9 * sentPerLayer, "one layer decoded at the endpoint: \(summary)")
        let rids = summary["rids"] as? [String: Int] ?? [:]
        XCTAssertEqual(rids.keys.sorted(), ["r0", "r1"], "each layer's packets carry its RID: \(summary)")
        XCTAssertGreaterThan(rids["r1"] ?? 0, (rids["r0"] ?? 0) / 8, "the lower layer is sent too: \(rids)")
        XCTAssertEqual((summary["mids"] as? [String: Int] ?? [:]).keys.sorted(), ["video0"], "and the mid: \(summary)")
        let recorded = try FFProbe.run(try XCTUnwrap(summary["recording"] as? String))
        let size = recorded.streams.first(where: \.isVideo).map { "\($0.width ?? 0)x\($0.height ?? 0)" }
        XCTAssertEqual(size, "640x360", "the top layer's pictures, not a mix")
    }

    /// The per-output figures of a `--json` push's `stopped` event.
    static func stoppedOutputs(_ cli: RunningCLI) -> [[String: Any]] {
        cli.stoppedStats?["outputs"] as? [[String: Any]] ?? []
    }
}
