import Foundation
import XCTest

/// The WHIP tests' peers: aiortc's endpoint (Support/whip_endpoint.py) and the CLI, both in the
/// test's own network namespace (libnice gathers no candidate on loopback).
extension NginxTestCase {
    struct WHIPEndpoint {
        let process: RunningCLI
        let url: String
    }

    /// aiortc's endpoint, listening in `namespace` (on 127.0.0.1), or in its peer namespace (on
    /// the veth's other end) with `inPeer`; `extra`: its options (--relay, --trickle, --one-layer).
    func startWHIPEndpoint(in namespace: NetworkNamespace, inPeer: Bool = false, token: String?, tokenFile: String? = nil,
                           extra: [String] = []) async throws -> WHIPEndpoint {
        let python = try PythonTools.python(with: ["aiortc", "aiohttp"])
        let script = TestMedia.repositoryRoot.appendingPathComponent("Tests/LivePushIntegrationTests/Support/whip_endpoint.py").path
        let port = Int.random(in: 20_000...40_000)
        let credential = token.map { ["--token", $0] } ?? ["--token-file", tokenFile ?? ""]
        let host = inPeer ? NetworkNamespace.peerAddress : "127.0.0.1"
        let command = inPeer ? namespace.peerCommand : namespace.command
        let (executable, arguments) = command(python, [script, "--host", host, "--port", "\(port)"] + credential
                                              + ["--out", dir.appendingPathComponent("whip").path] + extra)
        let process = try RunningCLI(executable: executable, arguments)
        let listening = await process.awaitLine(timeout: .seconds(60)) { $0.hasPrefix("LISTENING") }
        try XCTSkipIf(listening == nil, "the aiortc endpoint did not start: \(process.standardError)")
        return WHIPEndpoint(process: process, url: "http://\(host):\(port)/whip/endpoint")
    }

    /// The CLI with `arguments`, in `namespace`, with `environment` added to its own.
    func runInNamespace(_ namespace: NetworkNamespace, _ arguments: [String], environment: [String: String] = [:]) throws -> RunningCLI {
        let binary = try XCTUnwrap(LivePushCLI.binary)
        var (executable, all) = namespace.command(binary, arguments)
        if !environment.isEmpty {
            all = ["netns", "exec", namespace.name, "env"] + environment.map { "\($0.key)=\($0.value)" } + [binary] + arguments
            executable = ProcessRunner.which("ip") ?? "/usr/sbin/ip"
        }
        return try RunningCLI(executable: executable, all)
    }
}
