import Foundation
import LivePush
import XCTest

/// `push` signs its URLs with a private key from `LIVEPUSH_AUTH_KEY` or `--auth-key-file`,
/// which keep it out of the process's arguments (`/proc/PID/cmdline`, readable by every user).
/// nginx-rtmp's `on_publish` asks `auth_server.py` (the shared key, hashlib MD5) whether each
/// signed URL is valid.
final class PushAuthKeySecrecyTests: XCTestCase {
    private let privateKey = "nginx-env-K3y-never-an-argument"
    private var auth: AuthHTTPServer!
    private var nginx: NginxRTMPServer!
    private var dir: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        try XCTSkipUnless(AuthHTTPServer.isAvailable, "python3 not installed")
        auth = try AuthHTTPServer(privateKey: privateKey)
        nginx = try NginxRTMPServer(onPublishURL: auth.publishURL)
        dir = try TestMedia.makeTemporaryDirectory(prefix: "PushAuthKeySecrecy")
    }

    override func tearDown() {
        nginx?.stop()
        auth?.stop()
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        nginx = nil
        auth = nil
        dir = nil
    }

    /// The arguments a process was started with, as any user on the machine reads them.
    private func commandLine(of pid: Int32) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    func testTheEnvironmentsKeySignsARealTimePushAndIsNotInTheCommandLine() async throws {
        let clip = try PlayoutClip.a.make(in: dir, seconds: 6)
        let cli = try RunningCLI(["push", clip, nginx.url(stream: "env"), "--json", "--retry-count", "0"],
                                 environment: ["LIVEPUSH_AUTH_KEY": privateKey])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        // Published: the signed URL was accepted; the push goes on for seconds more in real time.
        let published = await cli.awaitLine(timeout: .seconds(30)) { $0.contains("\"pushStarted\"") }
        XCTAssertNotNil(published, "\(cli.output)\n\(cli.standardError)\n\(auth.log)")
        XCTAssertTrue(cli.isRunning, "still pushing while its command line is read")
        let arguments = try commandLine(of: cli.processIdentifier)
        XCTAssertTrue(arguments.contains("push") && arguments.contains("--json"), arguments)
        XCTAssertFalse(arguments.contains(privateKey), "the key is in /proc/PID/cmdline: \(arguments)")

        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        _ = try await nginx.awaitRecording(stream: "env")
        XCTAssertTrue(auth.decisions.contains { $0.hasPrefix("publish app=live name=env -> 200 valid") }, auth.log)
        let everything = cli.output.joined(separator: "\n") + cli.standardError
        XCTAssertFalse(everything.contains(privateKey), everything)
        XCTAssertFalse(everything.contains("warning"), "no warning without --auth-key: \(everything)")
    }

    func testAKeyFileSignsAPushItsTrailingNewlineDropped() async throws {
        let keyFile = dir.appendingPathComponent("auth.key").path
        try (privateKey + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), nginx.url(stream: "file"), "--fast", "--retry-count", "0",
                                          "--auth-key-file", keyFile], timeout: 60)
        XCTAssertEqual(result.exitCode, 0, result.summary + auth.log)
        _ = try await nginx.awaitRecording(stream: "file")
        XCTAssertTrue(auth.decisions.contains { $0.hasPrefix("publish app=live name=file -> 200 valid") }, auth.log)
    }

    /// Two sources that disagree are a usage error (64) that names them and shows neither key;
    /// nothing is published.
    func testSourcesThatDisagreeAreRefused() throws {
        let keyFile = dir.appendingPathComponent("other.key").path
        try "another-key-entirely\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        let cases: [([String], [String: String], [String])] = [
            (["--auth-key-file", keyFile], ["LIVEPUSH_AUTH_KEY": privateKey], ["--auth-key-file", "LIVEPUSH_AUTH_KEY"]),
            (["--auth-key", privateKey, "--auth-key-file", keyFile], [:], ["--auth-key", "--auth-key-file"]),
        ]
        for (arguments, environment, named) in cases {
            let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), nginx.url(stream: "conflict")] + arguments,
                                             timeout: 30, environment: environment)
            XCTAssertEqual(result.exitCode, 64, result.summary)
            for source in named { XCTAssertTrue(result.stderrString.contains(source), result.stderrString) }
            XCTAssertFalse(result.stderrString.contains(privateKey) || result.stderrString.contains("another-key"), result.stderrString)
        }
        let empty = dir.appendingPathComponent("empty.key").path
        try "\n".write(toFile: empty, atomically: true, encoding: .utf8)
        let emptyFile = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), nginx.url(stream: "conflict"), "--auth-key-file", empty],
                                            timeout: 30, environment: [:])
        XCTAssertEqual(emptyFile.exitCode, 64, emptyFile.summary)
        XCTAssertTrue(emptyFile.stderrString.contains("is empty"), emptyFile.stderrString)
        XCTAssertTrue(auth.decisions.isEmpty, "nothing was published: \(auth.log)")
    }
}
