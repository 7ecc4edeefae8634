@testable import LivePushLoopback
import XCTest

/// FaultSpec parsing (valid and invalid), rule descriptions and trigger matching.
final class FaultLoopbackSpecTests: XCTestCase {
    func testValidSpecs() throws {
        let cases: [(String, FaultRule)] = [
            ("refuse@conn=1-2", FaultRule(.refuse, when: FaultTrigger(connections: 1...2))),
            ("reset-after-bytes=200000@conn=1", FaultRule(.resetAfterBytes(200_000), when: .connection(1))),
            ("reset-after-bytes=64k", FaultRule(.resetAfterBytes(65_536))),
            ("reset-after-bytes=1m", FaultRule(.resetAfterBytes(1_048_576))),
            ("reset-after=2s", FaultRule(.resetAfter(.seconds(2)))),
            ("stall@after=1s,conn=1", FaultRule(.stall, when: FaultTrigger(connections: 1...1, afterTime: .seconds(1)))),
            ("stale@conn=1,after=2s", FaultRule(.stale(nil), when: FaultTrigger(connections: 1...1, afterTime: .seconds(2)))),
            ("stale=15s", FaultRule(.stale(.seconds(15)))),
            ("blackhole@messages=300", FaultRule(.blackhole, when: FaultTrigger(afterMessages: 300))),
            ("throttle=64k", FaultRule(.throttle(bytesPerSecond: 65_536))),
            ("throttle=50000", FaultRule(.throttle(bytesPerSecond: 50_000))),
            ("latency=200ms", FaultRule(.latency(.milliseconds(200)))),
            ("latency=1.5s", FaultRule(.latency(.milliseconds(1500)))),
            ("close-handshake", FaultRule(.closeDuringHandshake)),
            ("reject-connect", FaultRule(.rejectConnect)),
            ("reject-publish", FaultRule(.rejectPublish(.badName))),
            ("reject-publish=badname", FaultRule(.rejectPublish(.badName))),
            ("reject-publish=already", FaultRule(.rejectPublish(.alreadyPublishing))),
            ("close-after-publish", FaultRule(.closeAfterPublish)),
            ("malformed-reply", FaultRule(.malformedReply)),
            ("truncated-reply@conn=2", FaultRule(.truncatedReply, when: .connection(2))),
            ("reset@messages=50", FaultRule(.reset, when: FaultTrigger(afterMessages: 50))),
            ("reset@conn=3-", FaultRule(.reset, when: FaultTrigger(connections: 3...Int.max))),
            ("stall@at=5s", FaultRule(.stall, when: FaultTrigger(afterTime: .seconds(5), timeOrigin: .loopbackStart))),
            (" Refuse@conn=1 ", FaultRule(.refuse, when: .connection(1))),
            ("reconnect-request@conn=1,after=5s", FaultRule(.reconnectRequest(tcUrl: nil), when: FaultTrigger(connections: 1...1, afterTime: .seconds(5)))),
            ("reconnect-request=/moved@conn=1", FaultRule(.reconnectRequest(tcUrl: "/moved"), when: .connection(1))),
            ("reconnect-request=rtmp://127.0.0.1:1936/live", FaultRule(.reconnectRequest(tcUrl: "rtmp://127.0.0.1:1936/live"))),
        ]
        for (text, expected) in cases {
            let rule = try FaultSpec.parse(text)
            XCTAssertEqual(rule, expected, text)
            // The description is spec syntax and reads back to the same rule.
            XCTAssertEqual(try FaultSpec.parse(rule.description), rule, "\(text) → \(rule.description)")
        }
        XCTAssertEqual(try FaultSpec.parse("stall@after=1s,conn=1").description, "stall@conn=1,after=1s")
        XCTAssertEqual(try FaultSpec.parse("latency=1500ms").description, "latency=1500ms")
        XCTAssertEqual(try FaultSpec.parse("refuse").description, "refuse")
    }

    func testInvalidSpecsSayWhy() {
        let cases: [(String, String)] = [
            ("", "empty"),
            ("refuze", "unknown fault 'refuze'"),
            ("refuse=3", "takes no argument"),
            ("throttle", "needs a rate"),
            ("throttle=fast", "not a positive rate"),
            ("throttle=0", "not a positive rate"),
            ("latency=200", "needs a unit"),
            ("latency=soon", "not a duration"),
            ("reset-after=-1s", "not a duration"),
            ("reset-after-bytes=lots", "not a size"),
            ("reject-publish=maybe", "'badname' or 'already'"),
            ("stale=10", "needs a unit"),
            ("blackhole=1s", "takes no argument"),
            ("refuse@", "nothing after '@'"),
            ("refuse@conn=0", "numbered from 1"),
            ("refuse@conn=3-1", "range is empty"),
            ("refuse@conn=1-x", "not a connection number"),
            ("refuse@conn", "needs a value"),
            ("stall@after=1s,at=2s", "only one of"),
            ("stall@when=now", "unknown condition 'when'"),
            ("reset@messages=-2", "whole number"),
            ("=3", "missing fault name"),
            ("reconnect-request=", "takes a tcUrl"),
            ("reconnect-request=rtmp://a b/live", "takes a tcUrl"),
        ]
        for (text, fragment) in cases {
            XCTAssertThrowsError(try FaultSpec.parse(text), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(fragment), "'\(text)': \(message)")
                XCTAssertTrue(message.contains("invalid fault '\(text)'"), message)
            }
        }
    }

    func testTriggerConnectionsAndConditions() {
        let always = FaultTrigger.always
        XCTAssertTrue(always.matches(connection: 1))
        XCTAssertTrue(always.isDue(connection: 99, sinceConnectionStart: .zero, sinceLoopbackStart: .zero, messages: 0))

        let firstTwo = FaultTrigger(connections: 1...2)
        XCTAssertEqual((1...4).map { firstTwo.matches(connection: $0) }, [true, true, false, false])

        let late = FaultTrigger(connections: 2...2, afterTime: .seconds(1), afterMessages: 5)
        XCTAssertFalse(late.isDue(connection: 1, sinceConnectionStart: .seconds(9), sinceLoopbackStart: .seconds(9), messages: 9))
        XCTAssertFalse(late.isDue(connection: 2, sinceConnectionStart: .milliseconds(999), sinceLoopbackStart: .seconds(9), messages: 9))
        XCTAssertFalse(late.isDue(connection: 2, sinceConnectionStart: .seconds(2), sinceLoopbackStart: .seconds(9), messages: 4))
        XCTAssertTrue(late.isDue(connection: 2, sinceConnectionStart: .seconds(1), sinceLoopbackStart: .seconds(9), messages: 5))
        XCTAssertEqual(late.timeRemaining(sinceConnectionStart: .milliseconds(250), sinceLoopbackStart: .zero), .milliseconds(750))
        XCTAssertEqual(late.timeRemaining(sinceConnectionStart: .seconds(3), sinceLoopbackStart: .zero), .zero)
        XCTAssertNil(always.timeRemaining(sinceConnectionStart: .zero, sinceLoopbackStart: .zero))

        let sinceStart = FaultTrigger(afterTime: .seconds(5), timeOrigin: .loopbackStart)
        XCTAssertFalse(sinceStart.isDue(connection: 1, sinceConnectionStart: .seconds(10), sinceLoopbackStart: .seconds(4), messages: 0))
        XCTAssertTrue(sinceStart.isDue(connection: 1, sinceConnectionStart: .zero, sinceLoopbackStart: .seconds(5), messages: 0))
    }

    func testFaultCategories() {
        XCTAssertTrue(Fault.rejectPublish(.alreadyPublishing).isRTMPLevel)
        XCTAssertTrue(Fault.truncatedReply.isRTMPLevel)
        XCTAssertFalse(Fault.stall.isRTMPLevel)
        XCTAssertTrue(Fault.throttle(bytesPerSecond: 1).isContinuous)
        XCTAssertFalse(Fault.reset.isContinuous)
        XCTAssertTrue(Fault.blackhole.isContinuous)
        XCTAssertFalse(Fault.stale(nil).isContinuous)
    }

    func testUpstreamAddresses() {
        XCTAssertEqual(UpstreamAddress("127.0.0.1:19350"), UpstreamAddress(host: "127.0.0.1", port: 19350))
        XCTAssertEqual(UpstreamAddress("rtmp://example.com/live/s"), UpstreamAddress(host: "example.com", port: 1935))
        XCTAssertEqual(UpstreamAddress("rtmp://u:p@example.com:1940/live"), UpstreamAddress(host: "example.com", port: 1940))
        XCTAssertEqual(UpstreamAddress("[::1]:1936"), UpstreamAddress(host: "::1", port: 1936))
        XCTAssertEqual(UpstreamAddress("localhost"), UpstreamAddress(host: "localhost", port: 1935))
        XCTAssertNil(UpstreamAddress("127.0.0.1:0"))
        XCTAssertNil(UpstreamAddress("http://example.com/"))
        XCTAssertNil(UpstreamAddress(""))
        XCTAssertThrowsError(try FaultLoopback(configuration: .init(upstream: "host:notaport")).start())
    }
}
