import XCTest
@testable import LivePush

/// Every message a running push takes, decided with no engine, outputs or sockets: the push's
/// state and the events the app hears, what the outputs are ordered, what the producer gets,
/// and when it stops. (The lifecycle is in `PushControlLifecycleTests`.)
final class PushControlTests: XCTestCase {
    static func url(_ kind: PushURL.Scheme, _ index: Int) -> PushURL {
        let text = switch kind {
        case .rtmp: "rtmp://example.com/live/key\(index)"
        case .rtmps: "rtmps://example.com/live/key\(index)"
        case .srt: "srt://example.com:9000?streamid=key\(index)"
        case .http: "http://example.com/whip/\(index)"
        case .https: "https://example.com/whip/\(index)"
        case .file: "file:///tmp/hls\(index)/index.m3u8"
        }
        return try! PushURL(text)  // swiftlint:disable:this force_try
    }

    static func control(_ kinds: [PushURL.Scheme] = [.rtmp], renditions: Bool = false, slate: Bool = false) -> PushControl {
        PushControl(urls: kinds.enumerated().map { url($1, $0) }, hasRenditions: renditions, hasSlate: slate)
    }

    private func control(_ kinds: [PushURL.Scheme] = [.rtmp], renditions: Bool = false) -> PushControl {
        var control = Self.control(kinds, renditions: renditions)
        _ = try? control.apply(.start)
        return control
    }

    static func eventNames(_ actions: PushControl.Actions) -> [String] {
        actions.events.map(name)
    }

    static func name(_ event: PushEvent) -> String {
        switch event {
        case .stateChanged(let state): "state \(state)"
        case .output(let id, _, let event): "output \(id) \(name(event))"
        default: event.name
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

    func testAStopStopsTheProducerAndOrdersEveryOutputToStopAndLaterCommandsAreDropped() throws {
        var c = control([.rtmp, .srt])
        let stop = try c.apply(.stop)
        XCTAssertTrue(stop.stopsProducer)
        XCTAssertTrue(c.stopRequested)
        XCTAssertEqual(stop.outputs.map(\.id), [0, 1])
        XCTAssertEqual(stop.outputs.map(\.order), [.stop, .stop])
        XCTAssertEqual(Self.eventNames(stop), ["state stopping"])
        XCTAssertEqual(producerNames(try c.apply(.command(.pause))), [], "nothing reaches a stopped producer")
    }

    func testReconnectURLAndTokenGoToTheOutputsTheyConcern() throws {
        var c = control([.rtmp, .https, .http])
        _ = try c.apply(.output(id: 0, .published(url: "a")))
        XCTAssertEqual(try c.apply(.reconnect).outputs.map(\.order), [.reconnect, .reconnect, .reconnect])
        let url = try PushURL("rtmp://example.com/live/key?auth_key=1-0-0-abc")
        let refreshed = try c.apply(.updateURL(url))
        XCTAssertEqual(refreshed.outputs.map(\.id), [0], "the refreshed URL is the first output's")
        XCTAssertEqual(refreshed.outputs.first?.order, .updateURL(url))
        XCTAssertEqual(try c.apply(.updateWHIPToken("t")).outputs.map(\.id), [1, 2], "only WHIP outputs take a bearer token")
        XCTAssertEqual(try c.apply(.stopOutput(2)).outputs.map(\.id), [2])
        XCTAssertFalse(c.stopRequested)
        XCTAssertEqual(producerNames(try c.apply(.command(.pause))), ["pause"])
        // The first output's tagged events carry its refreshed URL, redacted.
        let lost = try c.apply(.output(id: 0, .connectionLost(LivePushError(.connectionLost))))
        guard case .output(0, let shown, _) = lost.events.first else { return XCTFail("\(lost.events)") }
        XCTAssertEqual(shown, url.redacted)
        XCTAssertFalse(shown.contains("abc"))
    }

    /// The network as a whole is reported before the bitrate change it causes; an output with
    /// an encode of its own also moves that encode's rate, and asks it for keyframes.
    func testAnOutputsNetworkAndKeyframeRequestsReachTheProducer() throws {
        var c = control([.rtmp, .https], renditions: true)
        _ = try c.apply(.output(id: 0, .published(url: "a")))
        let poor = try c.apply(.output(id: 1, .network(.poor)))
        XCTAssertEqual(Self.eventNames(poor), ["output 1 networkPoor", "networkPoor"])
        XCTAssertEqual(producerNames(poor), ["outputNetwork 1 true", "networkChanged true"])
        let keyframe = try c.apply(.output(id: 1, .keyframeRequested))
        XCTAssertEqual(producerNames(keyframe), ["keyframeRequested 1"])
        XCTAssertEqual(Self.eventNames(keyframe), [], "the app never hears of it")

        var single = control()
        let alone = try single.apply(.output(id: 0, .network(.poor)))
        XCTAssertEqual(Self.eventNames(alone), ["networkPoor"], "one output is the push: no per-output event")
        XCTAssertEqual(producerNames(alone), ["networkChanged true"], "no rendition to move")
    }

    /// Every output failing its first connect ends the producer and the push; one failing of
    /// two does not.
    func testTheProducerStopsOnlyWhenEveryOutputFailedItsFirstConnect() throws {
        var c = control([.rtmp, .rtmp])
        let refused = LivePushError(.connectionRefused)
        let first = try c.apply(.output(id: 0, .connectFailed(refused)))
        XCTAssertFalse(first.stopsProducer)
        XCTAssertFalse(first.endsPush)
        XCTAssertEqual(Self.eventNames(first), ["output 0 connectFailed"])
        let second = try c.apply(.output(id: 1, .connectFailed(refused)))
        XCTAssertTrue(second.stopsProducer)
        XCTAssertTrue(second.endsPush)
        XCTAssertTrue(c.stopRequested)
        XCTAssertEqual(Self.eventNames(second), ["output 1 connectFailed", "connectFailed", "sdkError"])
        XCTAssertEqual(c.state, .connecting, "the state moves when the pusher closes the push")
        let close = try c.apply(.close(finalStats: PushStats()))
        XCTAssertEqual(Self.eventNames(close), ["state failed", "stopped"])
        XCTAssertEqual(c.state, .failed(refused))
    }
}
