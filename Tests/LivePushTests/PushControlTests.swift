import XCTest
@testable import LivePush

/// Every message a running push takes, decided with no engine, outputs or sockets: what the
/// pusher is told, what the outputs are ordered, what the producer gets, and when it stops.
final class PushControlTests: XCTestCase {
    private func control(_ kinds: [PushURL.Scheme] = [.rtmp], renditions: Bool = false) -> PushControl {
        PushControl(outputKinds: kinds, hasRenditions: renditions)
    }

    private func reportNames(_ actions: PushControl.Actions) -> [String] {
        actions.reports.map { report in
            switch report {
            case .push(let signal): "push \(Self.name(signal))"
            case .output(let id, let signal): "output \(id) \(Self.name(signal))"
            }
        }
    }

    private static func name(_ signal: PushOutput.Signal) -> String {
        switch signal {
        case .published: "published"
        case .network(let change): change == .poor ? "poor" : "recovered"
        case .connectFailed: "connectFailed"
        case .connectionLost: "connectionLost"
        case .finished: "finished"
        case .keyframeRequested: "keyframeRequested"
        default: "other"
        }
    }

    private func producerNames(_ actions: PushControl.Actions) -> [String] {
        actions.producer.map { command in
            switch command {
            case .networkChanged(let poor): "networkChanged \(poor)"
            case .outputNetwork(let id, let poor): "outputNetwork \(id) \(poor)"
            case .keyframeRequested(let id): "keyframeRequested \(id)"
            case .pause: "pause"
            default: "other"
            }
        }
    }

    func testAStopStopsTheProducerAndOrdersEveryOutputToStopAndLaterCommandsAreDropped() {
        var c = control([.rtmp, .srt])
        let stop = c.apply(.stop)
        XCTAssertTrue(stop.stopsProducer)
        XCTAssertTrue(c.stopRequested)
        XCTAssertEqual(stop.outputs.map(\.id), [0, 1])
        XCTAssertEqual(stop.outputs.map(\.order), [.stop, .stop])
        XCTAssertEqual(producerNames(c.apply(.command(.pause))), [], "nothing reaches a stopped producer")
    }

    func testReconnectURLAndTokenGoToTheOutputsTheyConcern() throws {
        var c = control([.rtmp, .https, .http])
        XCTAssertEqual(c.apply(.reconnect).outputs.map(\.order), [.reconnect, .reconnect, .reconnect])
        let url = try PushURL("rtmp://example.com/live/key?auth_key=1-0-0-abc")
        let refreshed = c.apply(.updateURL(url))
        XCTAssertEqual(refreshed.outputs.map(\.id), [0], "the refreshed URL is the first output's")
        XCTAssertEqual(refreshed.outputs.first?.order, .updateURL(url))
        XCTAssertEqual(c.apply(.updateWHIPToken("t")).outputs.map(\.id), [1, 2], "only WHIP outputs take a bearer token")
        XCTAssertEqual(c.apply(.stopOutput(2)).outputs.map(\.id), [2])
        XCTAssertFalse(c.stopRequested)
        XCTAssertEqual(producerNames(c.apply(.command(.pause))), ["pause"])
    }

    /// The network as a whole is reported before the bitrate change it causes; an output with
    /// an encode of its own also moves that encode's rate, and asks it for keyframes.
    func testAnOutputsNetworkAndKeyframeRequestsReachTheProducer() {
        var c = control([.rtmp, .https], renditions: true)
        _ = c.apply(.output(id: 0, .published(url: "a")))
        let poor = c.apply(.output(id: 1, .network(.poor)))
        XCTAssertEqual(reportNames(poor), ["output 1 poor", "push poor"])
        XCTAssertEqual(producerNames(poor), ["outputNetwork 1 true", "networkChanged true"])
        let keyframe = c.apply(.output(id: 1, .keyframeRequested))
        XCTAssertEqual(producerNames(keyframe), ["keyframeRequested 1"])
        XCTAssertEqual(reportNames(keyframe), ["output 1 keyframeRequested"], "the pusher hears it per output only")

        var single = control()
        let alone = single.apply(.output(id: 0, .network(.poor)))
        XCTAssertEqual(reportNames(alone), ["push poor"], "one output is the push: no per-output report")
        XCTAssertEqual(producerNames(alone), ["networkChanged true"], "no rendition to move")
    }

    /// Every output failing its first connect ends the producer; one failing of two does not.
    func testTheProducerStopsOnlyWhenEveryOutputFailedItsFirstConnect() {
        var c = control([.rtmp, .rtmp])
        let first = c.apply(.output(id: 0, .connectFailed(LivePushError(.connectionRefused))))
        XCTAssertFalse(first.stopsProducer)
        XCTAssertEqual(reportNames(first), ["output 0 connectFailed"])
        let second = c.apply(.output(id: 1, .connectFailed(LivePushError(.connectionRefused))))
        XCTAssertTrue(second.stopsProducer)
        XCTAssertTrue(c.stopRequested)
        XCTAssertEqual(reportNames(second), ["output 1 connectFailed", "push connectFailed"])
    }
}
