import Foundation
import XCTest

/// A network namespace of the test's own (root only), with loopback and a veth pair whose one
/// end has 10.200.0.1. WebRTC needs it: libnice gathers no candidate on a loopback interface,
/// and a test must not add interfaces to the machine's own namespace. Whatever runs in it
/// (`command(_:)`) talks only to what else runs in it. Removed by `remove()` or at deinit.
///
/// With `peer`, a second namespace holds the veth pair's other end, with 10.200.0.2
/// (`peerCommand(_:)`): traffic between the two crosses the veth link, so `setLink(up:)` cuts
/// it and restores it as a real network does (within one namespace a link set down still
/// delivers to its own address).
final class NetworkNamespace {
    let name: String
    let peerName: String?
    static let address = "10.200.0.1"
    static let peerAddress = "10.200.0.2"

    static var isAvailable: Bool { getuid() == 0 && ProcessRunner.which("ip") != nil }

    init(peer: Bool = false) throws {
        try XCTSkipUnless(Self.isAvailable, "network namespaces need root and iproute2")
        name = "livepush-\(UUID().uuidString.prefix(8).lowercased())"
        peerName = peer ? name + "-b" : nil
        var steps = [["netns", "add", name], ["-n", name, "link", "set", "lo", "up"],
                     ["-n", name, "link", "add", "wan0", "type", "veth", "peer", "name", "wan1"],
                     ["-n", name, "addr", "add", "\(Self.address)/24", "dev", "wan0"],
                     ["-n", name, "link", "set", "wan0", "up"]]
        if let peerName {
            steps += [["netns", "add", peerName], ["-n", peerName, "link", "set", "lo", "up"],
                      ["-n", name, "link", "set", "wan1", "netns", peerName],
                      ["-n", peerName, "addr", "add", "\(Self.peerAddress)/24", "dev", "wan1"],
                      ["-n", peerName, "link", "set", "wan1", "up"]]
        } else {
            steps.append(["-n", name, "link", "set", "wan1", "up"])
        }
        for arguments in steps {
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

    /// `command(_:_:)` for the peer namespace (the veth's other end).
    func peerCommand(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        (ProcessRunner.which("ip") ?? "/usr/sbin/ip", ["netns", "exec", peerName ?? name, executable] + arguments)
    }

    /// Sets this namespace's end of the veth link down (a cut: the peer is unreachable, its
    /// route gone) or up again.
    func setLink(up: Bool) throws {
        let result = try ProcessRunner.run("ip", ["-n", name, "link", "set", "wan0", up ? "up" : "down"], timeout: 10)
        XCTAssertTrue(result.succeeded, "ip link set wan0 \(up ? "up" : "down"): \(result.summary)")
    }

    func remove() {
        for namespace in [name] + (peerName.map { [$0] } ?? []) {
            _ = try? ProcessRunner.run("ip", ["netns", "delete", namespace], timeout: 10)
        }
    }
}
