import Foundation
@testable import LivePush
import XCTest

/// The pure decisions behind the control APIs' doors: who may bind where without a token,
/// which requests a web page could have sent, and which paths lie in the media root.
final class ControlAccessTests: XCTestCase {
    func testBeyondLoopbackNeedsAToken() {
        XCTAssertNoThrow(try ControlAccessPolicy.checkBinding(host: "127.0.0.1", token: nil))
        XCTAssertNoThrow(try ControlAccessPolicy.checkBinding(host: "localhost", token: nil))
        XCTAssertNoThrow(try ControlAccessPolicy.checkBinding(host: "::1", token: nil))
        XCTAssertNoThrow(try ControlAccessPolicy.checkBinding(host: "0.0.0.0", token: "t"))
        for host in ["0.0.0.0", "::", "10.0.0.5", "example.com"] {
            for token in [nil, ""] {
                XCTAssertThrowsError(try ControlAccessPolicy.checkBinding(host: host, token: token)) {
                    XCTAssertEqual(($0 as? LivePushError)?.code, .controlUnprotected)
                }
            }
        }
    }

    func testForeignOriginsAndHostsAreForbiddenAndBodiesMustBeJSON() {
        let loopback = ControlAccessPolicy(host: "127.0.0.1", port: 8089)
        func verdict(_ policy: ControlAccessPolicy, method: String = "POST", host: String? = "127.0.0.1:8089", origin: String? = nil,
                     type: String? = nil, body: Bool = false) -> ControlAccessPolicy.Verdict {
            policy.verdict(method: method, authority: host, origin: origin, contentType: type, hasBody: body)
        }
        XCTAssertEqual(verdict(loopback), .allowed)
        XCTAssertEqual(verdict(loopback, host: "localhost:8089"), .allowed)
        XCTAssertEqual(verdict(loopback, host: "[::1]:8089"), .allowed)
        XCTAssertEqual(verdict(loopback, host: nil), .allowed)
        XCTAssertEqual(verdict(loopback, origin: "http://127.0.0.1:8089"), .allowed)
        XCTAssertEqual(verdict(loopback, type: "application/json; charset=utf-8", body: true), .allowed)
        XCTAssertEqual(verdict(loopback, method: "GET", body: true), .allowed)
        XCTAssertEqual(verdict(loopback, type: "text/plain", body: true), .unsupportedMediaType)
        XCTAssertEqual(verdict(loopback, body: true), .unsupportedMediaType)
        for (host, origin) in [("evil.example:8089", nil), ("127.0.0.1:9999", nil), ("127.0.0.1:8089", "http://evil.example"),
                               ("127.0.0.1:8089", "null"), ("127.0.0.1:8089", "http://127.0.0.1:3000"),
                               ("127.0.0.1:8089", "https://127.0.0.1:8089"), ("a:b:c", nil)] {
            guard case .forbidden = verdict(loopback, host: host, origin: origin) else {
                return XCTFail("\(host) \(origin ?? "-") should be forbidden")
            }
        }
        // Bound to every interface (a token is then required): any host, but only its own origin.
        let everywhere = ControlAccessPolicy(host: "0.0.0.0", port: 8089)
        XCTAssertEqual(verdict(everywhere, host: "livepush-0.livepush:8089"), .allowed)
        XCTAssertEqual(verdict(everywhere, host: "10.1.2.3:8089", origin: "http://10.1.2.3:8089"), .allowed)
        guard case .forbidden = verdict(everywhere, host: "10.1.2.3:8089", origin: "http://evil.example:8089") else {
            return XCTFail("a foreign origin is forbidden on every interface too")
        }
    }

    func testPathsResolveInsideTheMediaRootAsRegularFiles() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("media-root-\(UUID().uuidString)")
        let rootDirectory = base.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: rootDirectory.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        try Data("x".utf8).write(to: rootDirectory.appendingPathComponent("sub/show.mp4"))
        try Data("x".utf8).write(to: base.appendingPathComponent("secret.mp4"))
        try FileManager.default.createSymbolicLink(atPath: rootDirectory.appendingPathComponent("escape.mp4").path,
                                                   withDestinationPath: base.appendingPathComponent("secret.mp4").path)
        try FileManager.default.createSymbolicLink(atPath: rootDirectory.appendingPathComponent("zero").path, withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: rootDirectory.appendingPathComponent("link.flv").path,
                                                   withDestinationPath: base.appendingPathComponent("secret.mp4").path)
        let root = try MediaRoot(rootDirectory.path)

        XCTAssertEqual(try root.fileToRead("sub/show.mp4"), root.path + "/sub/show.mp4")
        XCTAssertEqual(try root.fileToRead(root.path + "/sub/../sub/show.mp4"), root.path + "/sub/show.mp4")
        for outside in ["../secret.mp4", base.appendingPathComponent("secret.mp4").path, "escape.mp4", "zero", "/dev/zero", "sub",
                        "missing.mp4", "/etc/passwd"] {
            XCTAssertThrowsError(try root.fileToRead(outside), outside) {
                XCTAssertEqual(($0 as? LivePushError)?.code, .pathOutsideMediaRoot, outside)
            }
        }
        XCTAssertEqual(try root.fileToWrite("rec.flv"), root.path + "/rec.flv")
        XCTAssertEqual(try root.fileToWrite("sub/rec.flv"), root.path + "/sub/rec.flv")
        for outside in ["../rec.flv", "/tmp/rec.flv", "link.flv", "zero", "sub", "nodir/rec.flv", "sub/..", "."] {
            XCTAssertThrowsError(try root.fileToWrite(outside), outside)
        }
        XCTAssertThrowsError(try MediaRoot(base.appendingPathComponent("secret.mp4").path))
    }

    func testScheduleTimesOutsideAnInt64AreRefusedNamingTheField() {
        for (json, field) in [
            (#"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 1e300}]}"#, #"field "out""#),
            (#"{"content": [{"id": "a", "source": "a.mp4", "in": -1, "out": 1}]}"#, #"field "in""#),
            (#"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 1}], "ads": [{"id": "m", "type": "midroll", "source": "a.mp4", "in": 0, "out": 1, "at": 1e300}]}"#, #"field "at""#),
            (#"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 1}], "blackouts": [{"at": 1e300, "duration": 1}]}"#, #"field "at""#),
            (#"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 1}], "blackouts": [{"at": 0, "duration": 1e300}]}"#, #"field "duration""#),
        ] {
            XCTAssertThrowsError(try PlayoutSchedule(json: Data(json.utf8)), json) {
                XCTAssertEqual(($0 as? LivePushError)?.code, .scheduleInvalid)
                XCTAssertTrue(($0 as? LivePushError)?.message.contains(field) ?? false, "\(field): \($0)")
            }
        }
        XCTAssertThrowsError(try BlackoutWindow(parsing: "1e300+10"))
        XCTAssertThrowsError(try BlackoutWindow(parsing: "10+1e300"))
        XCTAssertThrowsError(try PlayoutSchedule(contentsOfFile: "/dev/zero"))
    }
}
