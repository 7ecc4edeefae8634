import Foundation
import XCTest

/// A network namespace of the test's own (root only), with loopback and a veth pair whose one
/// end has 10.200.0.1. WebRTC needs it: libnice gathers no candidate on a loopback interface,
/// and a test must not add interfaces to the machine's own namespace. Whatever runs in it
/// (`command(_:)`) talks only to what else runs in it. Removed by `remove()` or at deinit.
final class NetworkNamespace {
    let name: String
    static let address = "10.200.0.1"

    static var isAvailable: Bool { getuid() == 0 && ProcessRunner.which("ip") != nil }

    init() throws {
        try XCTSkipUnless(Self.isAvailable, "network namespaces need root and iproute2")
        name = "livepush-\(UUID().uuidString.prefix(8).lowercased())"
        for arguments in [["netns", "add", name], ["-n", name, "link", "set", "lo", "up"],
                          ["-n", name, "link", "add", "wan0", "type", "veth", "peer", "name", "wan1"],
                          ["-n", name, "addr", "add", "\(Self.address)/24", "dev", "wan0"],
                          ["-n", name, "link", "set", "wan0", "up"], ["-n", name, "link", "set", "wan1", "up"]] {
            let result = try ProcessRunner.run("ip", arguments, timeout: 10)
            if !result.succeeded {
                remove()
                throw XCTSkip("ip \(arguments.joined(separator: " ")) failed: \(result.summary)")
            }
        }
    }

    deinit { remove() }

    /// `executable` with `arguments`, run inside the namespace (`ip netns exec` execs it, so
    /// signals sent to the process reach the command itself).
    func command(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        (ProcessRunner.which("ip") ?? "/usr/sbin/ip", ["netns", "exec", name, executable] + arguments)
    }

    func remove() {
        _ = try? ProcessRunner.run("ip", ["netns", "delete", name], timeout: 10)
    }
}
