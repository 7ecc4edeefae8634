@testable import LivePushLoopback
import NIOCore
import XCTest

/// The SRT relay's pure parts: fault specs, the SRT header it reads, and a session's decision
/// for each datagram (the relay's I/O is checked against srt-live-transmit in `SRTFaultTests`).
final class SRTRelayRulesTests: XCTestCase {
    func testValidSpecsReadBackFromTheirDescription() throws {
        let cases: [(String, SRTFaultRule)] = [
            ("refuse", SRTFaultRule(.refuse)),
            ("refuse@conn=1-2", SRTFaultRule(.refuse, when: FaultTrigger(connections: 1...2))),
            ("drop@conn=1,after=2s", SRTFaultRule(.drop, when: FaultTrigger(connections: 1...1, afterTime: .seconds(2)))),
            ("drop@packets=500", SRTFaultRule(.drop, when: FaultTrigger(afterMessages: 500))),
            ("stall=3s@after=2s", SRTFaultRule(.stall(.seconds(3)), when: FaultTrigger(afterTime: .seconds(2)))),
            ("stall=1500ms@at=5s", SRTFaultRule(.stall(.milliseconds(1500)), when: FaultTrigger(afterTime: .seconds(5), timeOrigin: .loopbackStart))),
            ("loss=5%", SRTFaultRule(.loss(percent: 5))),
            ("loss=2.5", SRTFaultRule(.loss(percent: 2.5))),
        ]
        for (text, rule) in cases {
            let parsed = try SRTFaultSpec.parse(text)
            XCTAssertEqual(parsed, rule, text)
            XCTAssertEqual(try SRTFaultSpec.parse(parsed.description), rule, "\(text) → \(parsed.description)")
        }
        XCTAssertEqual(try SRTFaultSpec.parse("stall=3s@after=2s").description, "stall=3s@after=2s")
        XCTAssertEqual(try SRTFaultSpec.parse("loss=5").description, "loss=5%")
    }

    func testInvalidSpecsSayWhy() {
        let cases: [(String, String)] = [
            ("stall", "needs a duration"),
            ("stall=0s", "above zero"),
            ("stall=3", "needs a unit"),
            ("loss", "needs a percentage"),
            ("loss=101", "from 0 to 100"),
            ("drop=1", "takes no argument"),
            ("reset", "unknown SRT fault"),
            ("drop@", "nothing after '@'"),
            ("drop@packets=x", "whole number"),
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try SRTFaultSpec.parse(text), text) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(text): \(error)")
            }
        }
    }

    func testTheHeaderTellsDataControlHandshakeAndShutdownApart() {
        XCTAssertEqual(SRTPacket([0x12, 0x34] + [UInt8](repeating: 0, count: 14)).kind, .data)
        XCTAssertEqual(SRTPacket([0x80, 0x02] + [UInt8](repeating: 0, count: 14)).kind, .control(type: 2))
        XCTAssertEqual(SRTPacket([0x80, 0x05] + [UInt8](repeating: 0, count: 14)).kind, .shutdown)
        XCTAssertEqual(SRTPacket([0x80, 0x00]).kind, .runt)
        let induction = handshake(type: 1, socketID: 0x0102_0304)
        XCTAssertEqual(induction.kind, .handshake(type: 1))
        XCTAssertTrue(induction.isInduction)
        XCTAssertEqual(induction.handshakeSocketID, 0x0102_0304)
        XCTAssertEqual(handshake(type: 0xFFFF_FFFF, socketID: 7).kind, .handshake(type: SRTPacket.handshakeConclusion))
    }

    func testRefuseDropsTheCallersHandshakesOnly() {
        let session = makeSession([.init(.refuse)])
        let (forward, events) = session.admit(handshake(type: 1, socketID: 9), fromCaller: true)
        XCTAssertFalse(forward)
        XCTAssertEqual(events.map(\.description), ["session 1: fault refuse"])
        XCTAssertTrue(session.admit(handshake(type: 1, socketID: 9), fromCaller: false).forward, "the listener's handshakes are its own")
        XCTAssertTrue(session.admit(data, fromCaller: true).forward)
        XCTAssertEqual(session.figures.packetsDropped, 1)
    }

    func testDropAfterNPacketsStopsBothWaysForGood() throws {
        let session = makeSession([try SRTFaultSpec.parse("drop@packets=2")])
        XCTAssertTrue(session.admit(data, fromCaller: true).forward)
        XCTAssertTrue(session.admit(ack, fromCaller: false).forward)
        XCTAssertFalse(session.admit(data, fromCaller: true).forward, "due at the second data packet")
        XCTAssertFalse(session.admit(ack, fromCaller: false).forward)
        XCTAssertFalse(session.admit(ack, fromCaller: true).forward)
        XCTAssertEqual(session.figures.packetsDropped, 3)
        XCTAssertEqual(session.figures.dataPacketsFromCaller, 2)
    }

    func testAStallEndsAfterItsLength() throws {
        let start = NIODeadline.now()
        let session = makeSession([try SRTFaultSpec.parse("stall=2s@after=1s")], now: start)
        XCTAssertTrue(session.admit(data, fromCaller: true, now: start + .milliseconds(500)).forward)
        let (stalled, events) = session.admit(data, fromCaller: true, now: start + .seconds(1))
        XCTAssertFalse(stalled)
        XCTAssertEqual(events.map(\.description), ["session 1: fault stall=2s@after=1s"])
        XCTAssertFalse(session.admit(ack, fromCaller: false, now: start + .milliseconds(2900)).forward)
        let (back, ended) = session.admit(ack, fromCaller: false, now: start + .seconds(3))
        XCTAssertTrue(back)
        XCTAssertEqual(ended.map(\.description), ["session 1: stall=2s@after=1s over, forwarding again"])
        XCTAssertTrue(session.admit(data, fromCaller: true, now: start + .seconds(4)).forward)
    }

    func testLossConcernsDataPacketsOnly() {
        let all = makeSession([.init(.loss(percent: 100))])
        XCTAssertFalse(all.admit(data, fromCaller: true).forward)
        XCTAssertTrue(all.admit(ack, fromCaller: false).forward)
        XCTAssertTrue(all.admit(handshake(type: 1, socketID: 1), fromCaller: true).forward)
        let none = makeSession([.init(.loss(percent: 0))])
        for _ in 0..<100 { XCTAssertTrue(none.admit(data, fromCaller: true).forward) }
    }

    func testRulesForOtherSessionsDoNotApply() throws {
        let session = makeSession([try SRTFaultSpec.parse("drop@conn=2")])
        XCTAssertTrue(session.rules.isEmpty)
        XCTAssertTrue(session.admit(data, fromCaller: true).forward)
    }

    func testUpstreamAddresses() {
        XCTAssertEqual(UpstreamAddress(srt: "127.0.0.1:9000"), UpstreamAddress(host: "127.0.0.1", port: 9000))
        XCTAssertEqual(UpstreamAddress(srt: "srt://example.com:9000?latency=200000"), UpstreamAddress(host: "example.com", port: 9000))
        XCTAssertEqual(UpstreamAddress(srt: "[::1]:9000"), UpstreamAddress(host: "::1", port: 9000))
        XCTAssertNil(UpstreamAddress(srt: "127.0.0.1"), "SRT has no default port")
        XCTAssertNil(UpstreamAddress(srt: "rtmp://127.0.0.1:1935/live"))
    }

    // MARK: - Helpers

    private let data = SRTPacket([0x00, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 1328))
    private let ack = SRTPacket([0x80, 0x02] + [UInt8](repeating: 0, count: 42))

    private func handshake(type: UInt32, socketID: UInt32) -> SRTPacket {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes[0] = 0x80
        withUnsafeBytes(of: type.bigEndian) { bytes.replaceSubrange(36..<40, with: $0) }
        withUnsafeBytes(of: socketID.bigEndian) { bytes.replaceSubrange(40..<44, with: $0) }
        return SRTPacket(bytes)
    }

    private func makeSession(_ rules: [SRTFaultRule], now: NIODeadline = .now()) -> SRTRelaySession {
        SRTRelaySession(number: 1, caller: try! SocketAddress(ipAddress: "127.0.0.1", port: 40_000), callerSocketID: 1,
                        rules: rules, relayStarted: now, now: now)
    }
}
