import Foundation
@testable import LivePush
import XCTest

/// What a control-API caller may give as a channel's input: the `apiInputs` rules as data, the
/// URLs judged as libavformat reads them, and the URL that is opened for what is admitted.
final class APIInputPolicyTests: XCTestCase {
    private func policy(_ json: String) throws -> APIInputPolicy {
        try APIInputPolicy(json: JSONDecoder().decode(JSONField.self, from: Data(json.utf8)))
    }

    private func refusal(_ policy: APIInputPolicy, _ url: String) -> String? {
        do {
            _ = try policy.admit(url: url)
            return nil
        } catch {
            XCTAssertEqual(error.code, .inputNotAllowed, url)
            return error.message
        }
    }

    func testByDefaultNoNetworkInputIsAllowed() {
        let none = APIInputPolicy()
        for url in ["udp://127.0.0.1:5000", "http://127.0.0.1/x", "srt://10.0.0.1:9000", "rtmp://127.0.0.1/live/x"] {
            XCTAssertNotNil(refusal(none, url), url)
        }
    }

    func testRulesMatchSchemeAddressBlockAndPorts() throws {
        let rules = try policy(#"{"allow": [{"scheme": "srt", "host": "10.0.0.0/8", "ports": "9000-9100"}, {"scheme": "http", "host": "cam.example.com"}, {"scheme": "rtmp", "host": "::1", "ports": 1935}]}"#)
        XCTAssertEqual(try rules.admit(url: "srt://10.1.2.3:9050?streamid=x"), "srt://10.1.2.3:9050?streamid=x")
        XCTAssertNotNil(refusal(rules, "srt://10.1.2.3:9101"))
        XCTAssertNotNil(refusal(rules, "srt://11.1.2.3:9050"))
        XCTAssertNotNil(refusal(rules, "udp://10.1.2.3:9050"), "another scheme")
        XCTAssertNoThrow(try rules.admit(url: "http://CAM.example.com/feed"))
        XCTAssertNotNil(refusal(rules, "http://cam.example.com.evil.net/feed"))
        // libavformat's reading of the authority decides: the host is what follows the `@`.
        XCTAssertNotNil(refusal(rules, "http://cam.example.com@evil.net/feed"))
        XCTAssertNoThrow(try rules.admit(url: "rtmp://[::1]/live/x"), "the default port, an IPv6 literal")
        XCTAssertNotNil(refusal(rules, "rtmp://[::1]:1936/live/x"))
        // A block is compared with literal addresses only: a name is not resolved to decide.
        XCTAssertNotNil(refusal(rules, "srt://localhost.localdomain:9050"))
    }

    func testListenersNeedTheConfigurationsLeave() throws {
        let closed = try policy(#"{"allow": [{"scheme": "udp", "host": "*"}, {"scheme": "srt", "host": "*"}]}"#)
        for url in ["udp://0.0.0.0:5000", "udp://@:5000", "udp://[::]:5000", "srt://:9000?mode=listener", "srt://10.0.0.1:9000?mode=rendezvous",
                    "srt://10.0.0.1:9000?streamid=a&mode=listener"] {
            XCTAssertTrue(refusal(closed, url)?.contains("listens") == true, url)
        }
        let open = try policy(#"{"allow": [{"scheme": "udp", "host": "*"}, {"scheme": "srt", "host": "*"}], "listeners": true}"#)
        XCTAssertEqual(try open.admit(url: "udp://@:5000"), "udp://@:5000")
        XCTAssertNoThrow(try open.admit(url: "srt://:9000?mode=listener"))
        XCTAssertNotNil(refusal(open, "srt://1.2.3.4:9000?mode=other"))
    }

    func testADatagramInputBindsTheAddressItNamesAndTakesNoBindingOptions() throws {
        let rules = try policy(#"{"allow": [{"scheme": "udp", "host": "127.0.0.0/8"}, {"scheme": "udp", "host": "239.0.0.0/8"}, {"scheme": "rtp", "host": "127.0.0.1"}]}"#)
        XCTAssertEqual(try rules.admit(url: "udp://127.0.0.1:5000"), "udp://127.0.0.1:5000?localaddr=127.0.0.1")
        XCTAssertEqual(try rules.admit(url: "udp://127.0.0.1:5000?fifo_size=100"), "udp://127.0.0.1:5000?fifo_size=100&localaddr=127.0.0.1")
        XCTAssertEqual(try rules.admit(url: "rtp://127.0.0.1:5000"), "rtp://127.0.0.1:5000?localaddr=127.0.0.1")
        XCTAssertEqual(try rules.admit(url: "udp://239.1.1.1:5000"), "udp://239.1.1.1:5000", "a group binds itself")
        for key in ["localaddr=0.0.0.0", "localport=6000", "sources=1.2.3.4", "connect=1", "reuse=1"] {
            XCTAssertTrue(refusal(rules, "udp://127.0.0.1:5000?\(key)")?.contains("option") == true, key)
        }
        XCTAssertNotNil(refusal(rules, "udp://127.0.0.1"), "no port")
    }

    func testAnAdmittedSpecFollowsNoReferencesAndFilesPassUntouched() throws {
        let rules = try policy(#"{"allow": [{"scheme": "http", "host": "127.0.0.1"}]}"#)
        let live = ChannelSpec(id: "c", source: .live(url: "http://127.0.0.1:8080/x"), outputs: ["rtmp://h/a/s"])
        let admitted = try rules.admit(live)
        XCTAssertFalse(admitted.liveInput.followsReferences)
        XCTAssertTrue(live.liveInput.followsReferences, "the configuration's own channels follow them")
        let file = ChannelSpec(id: "f", source: .file(path: "/m/a.mp4", loop: .once), outputs: ["rtmp://h/a/s"])
        XCTAssertEqual(try APIInputPolicy().admit(file), file)
        XCTAssertThrowsError(try APIInputPolicy().admit(live)) { error in
            XCTAssertTrue((error as? LivePushError)?.message.contains(#"field "input""#) == true, "\(error)")
        }
    }

    func testBadRulesAreRefusedNamingTheField() {
        for (json, field) in [
            (#"{"allow": [{"scheme": "file", "host": "*"}]}"#, "apiInputs.allow[0].scheme"),
            (#"{"allow": [{"scheme": "udp", "host": "10.0.0.0/33"}]}"#, "apiInputs.allow[0].host"),
            (#"{"allow": [{"scheme": "udp", "host": "*", "ports": "9-1"}]}"#, "apiInputs.allow[0].ports"),
            (#"{"allow": [{"scheme": "udp", "host": "*", "port": 1}]}"#, "apiInputs.allow[0].port"),
            (#"{"listeners": "yes"}"#, "apiInputs.listeners"),
        ] {
            XCTAssertThrowsError(try policy(json), json) { error in
                XCTAssertTrue((error as? LivePushError)?.message.contains("field \"\(field)\"") == true, "\(error)")
            }
        }
    }

    func testAddressBlocks() throws {
        let block = try XCTUnwrap(IPNetwork("10.0.0.0/8"))
        XCTAssertTrue(block.contains(try XCTUnwrap(IPNetwork.address("10.255.0.1"))))
        XCTAssertFalse(block.contains(try XCTUnwrap(IPNetwork.address("11.0.0.1"))))
        XCTAssertFalse(block.contains(try XCTUnwrap(IPNetwork.address("::ffff:10.0.0.1"))), "another family")
        XCTAssertNil(IPNetwork.address("127.1"), "only what inet_pton reads as an address")
        XCTAssertTrue(try XCTUnwrap(IPNetwork("fd00::/8")).contains(try XCTUnwrap(IPNetwork.address("fd12::1"))))
    }
}
