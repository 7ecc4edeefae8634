import Foundation
import LivePush
import XCTest

/// `deploy/`: the Kubernetes manifests against the Kubernetes schemas, with what LivePush needs
/// of them (probes, scrape annotations, one shard file per replica, each a valid channels
/// configuration), and the systemd template unit through `systemd-analyze verify`. Each check
/// is also shown to fail on a broken copy.
final class DeployTests: XCTestCase {
    private static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private let manifest = repo.appendingPathComponent("deploy/kubernetes/livepush-channels.yaml").path
    private let unit = repo.appendingPathComponent("deploy/systemd/livepush-channels@.service").path

    func testTheKubernetesManifestsAreValidAndShardTheChannels() throws {
        let python = try PythonTools.python(with: ["kubernetes_validate"])  // brings PyYAML
        let validator = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("kubernetes-validate").path
        let valid = try ProcessRunner.run(validator, ["--strict", manifest], timeout: 120)
        XCTAssertTrue(valid.succeeded, valid.summary)

        let dir = try TestMedia.makeTemporaryDirectory(prefix: "deploy")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        let broken = dir.appendingPathComponent("broken.yaml").path
        try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: "failureThreshold: 3", with: "failureThreshold: three")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        XCTAssertFalse(try ProcessRunner.run(validator, ["--strict", broken], timeout: 120).succeeded, "a schema error is caught")

        // What LivePush needs of it, and each shard file parsed as a channels configuration.
        let script = """
        import json, sys, yaml
        all_docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
        docs = {d["kind"]: d for d in all_docs}
        sts, cm = docs["StatefulSet"], docs["ConfigMap"]
        pod = sts["spec"]["template"]
        container = pod["spec"]["containers"][0]
        print(json.dumps({
            "replicas": sts["spec"]["replicas"],
            "annotations": pod["metadata"]["annotations"],
            "liveness": container["livenessProbe"]["httpGet"]["path"],
            "readiness": container["readinessProbe"]["httpGet"]["path"],
            "command": container["command"],
            "tokenFromSecret": any(e["name"] == "LIVEPUSH_CONTROL_TOKEN" and "secretKeyRef" in e.get("valueFrom", {})
                                   and not e["valueFrom"]["secretKeyRef"].get("optional", False) for e in container["env"]),
            "shippedSecrets": [d["metadata"]["name"] for d in all_docs if d["kind"] == "Secret"],
            "mounts": {m["name"]: m["mountPath"] for m in container["volumeMounts"]},
            "shards": cm["data"],
        }))
        """
        let facts = try ProcessRunner.run(python, ["-c", script, manifest], timeout: 60)
        XCTAssertTrue(facts.succeeded, facts.summary)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(facts.stdoutString.utf8)) as? [String: Any])
        XCTAssertEqual(object["liveness"] as? String, "/healthz")
        XCTAssertEqual(object["readiness"] as? String, "/readyz")
        let annotations = try XCTUnwrap(object["annotations"] as? [String: String])
        XCTAssertEqual(annotations["prometheus.io/scrape"], "true")
        XCTAssertEqual(annotations["prometheus.io/path"], "/metrics")
        XCTAssertEqual(object["tokenFromSecret"] as? Bool, true, "the token comes from a Secret key the pod requires")
        XCTAssertEqual(object["shippedSecrets"] as? [String], [], "no token ships with the manifest (it once shipped change-me)")
        XCTAssertEqual((object["mounts"] as? [String: String])?["shards"], "/etc/livepush")
        XCTAssertTrue((object["command"] as? [String])?.joined(separator: " ").contains("/etc/livepush/shard-${HOSTNAME##*-}.json") ?? false)
        let shards = try XCTUnwrap(object["shards"] as? [String: String])
        let replicas = try XCTUnwrap(object["replicas"] as? Int)
        XCTAssertEqual(Set(shards.keys), Set((0..<replicas).map { "shard-\($0).json" }), "one shard file per replica")
        var ids: [String] = []
        for (name, text) in shards.sorted(by: { $0.key < $1.key }) {
            // The shapes are checked here; the media paths exist only in the cluster.
            let decoded = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            let channels = try XCTUnwrap(decoded?["channels"] as? [[String: Any]], name)
            ids += channels.compactMap { $0["id"] as? String }
            XCTAssertNotNil(ChannelsConfig.hostAndPort(decoded?["control"] as? String ?? ""), name)
            let root = try XCTUnwrap(decoded?["mediaRoot"] as? String, "\(name) names its media root")
            for channel in channels {
                for field in ["input", "playout", "alternate", "record"] {
                    guard let path = channel[field] as? String else { continue }
                    XCTAssertTrue(!path.hasPrefix("/") || path.hasPrefix(root + "/"), "\(name): \(path) is in \(root)")
                }
            }
        }
        XCTAssertEqual(ids.count, Set(ids).count, "a channel belongs to one shard")
    }

    func testTheSystemdTemplateUnitVerifies() throws {
        guard let analyze = ProcessRunner.which("systemd-analyze") else { throw XCTSkip("systemd-analyze is not installed") }
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "systemd")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        // verify checks that ExecStart's program exists: point it at the livepush built here.
        let binary = try XCTUnwrap(LivePushCLI.binary)
        let text = try String(contentsOfFile: unit, encoding: .utf8).replacingOccurrences(of: "/usr/local/bin/livepush", with: binary)
        let instance = dir.appendingPathComponent("livepush-channels@shard-0.service").path
        try text.write(toFile: instance, atomically: true, encoding: .utf8)
        let verified = try ProcessRunner.run(analyze, ["verify", instance], timeout: 60)
        XCTAssertTrue(verified.succeeded, verified.summary)
        XCTAssertFalse(verified.stderrString.contains("livepush-channels"), "no warning about the unit: \(verified.stderrString)")

        let broken = dir.appendingPathComponent("livepush-channels@broken.service").path
        try text.replacingOccurrences(of: "ExecStart=/", with: "ExecStart=").write(toFile: broken, atomically: true, encoding: .utf8)
        XCTAssertFalse(try ProcessRunner.run(analyze, ["verify", broken], timeout: 60).succeeded, "a bad unit is caught")
    }
}
