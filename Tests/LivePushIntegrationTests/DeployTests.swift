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

    /// The pod runs unprivileged on a read-only root file system and writes only its recordings
    /// volume (inside the shards' media root), and a NetworkPolicy admits only Prometheus from a
    /// labelled monitoring namespace to the control port.
    func testTheKubernetesPodIsLockedDownAndOnlyMonitoringMayReachIt() throws {
        let python = try PythonTools.python(with: ["kubernetes_validate"])  // brings PyYAML
        let script = """
        import json, sys, yaml
        all_docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
        sts = next(d for d in all_docs if d["kind"] == "StatefulSet")
        pod = sts["spec"]["template"]["spec"]
        container = pod["containers"][0]
        print(json.dumps({
            "pod": pod.get("securityContext", {}),
            "container": container.get("securityContext", {}),
            "automountToken": pod.get("automountServiceAccountToken", True),
            "mounts": {m["name"]: {"path": m["mountPath"], "readOnly": m.get("readOnly", False)} for m in container["volumeMounts"]},
            "volumes": {v["name"]: sorted(k for k in v if k != "name") for v in pod.get("volumes", [])},
            "claimTemplates": [t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])],
            "podLabels": sts["spec"]["template"]["metadata"]["labels"],
            "policies": [d for d in all_docs if d["kind"] == "NetworkPolicy"],
            "records": [c["record"] for d in all_docs if d["kind"] == "ConfigMap" for text in d["data"].values()
                        for c in json.loads(text)["channels"] if "record" in c],
            "mediaRoots": sorted({json.loads(text)["mediaRoot"] for d in all_docs if d["kind"] == "ConfigMap" for text in d["data"].values()}),
        }))
        """
        let run = try ProcessRunner.run(python, ["-c", script, manifest], timeout: 60)
        XCTAssertTrue(run.succeeded, run.summary)
        let facts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdoutString.utf8)) as? [String: Any])

        let pod = try XCTUnwrap(facts["pod"] as? [String: Any])
        let container = try XCTUnwrap(facts["container"] as? [String: Any])
        XCTAssertEqual(pod["runAsNonRoot"] as? Bool, true)
        XCTAssertGreaterThan(pod["runAsUser"] as? Int ?? 0, 0, "a non-root uid the runtime can check")
        XCTAssertNotNil(pod["fsGroup"], "the recordings volume is writable by the pod's group")
        XCTAssertEqual((pod["seccompProfile"] as? [String: Any])?["type"] as? String, "RuntimeDefault")
        XCTAssertEqual(container["runAsNonRoot"] as? Bool, true)
        XCTAssertEqual(container["allowPrivilegeEscalation"] as? Bool, false)
        XCTAssertEqual(container["readOnlyRootFilesystem"] as? Bool, true)
        XCTAssertNotEqual(container["privileged"] as? Bool, true)
        XCTAssertEqual((container["capabilities"] as? [String: Any])?["drop"] as? [String], ["ALL"])
        XCTAssertNil((container["capabilities"] as? [String: Any])?["add"], "no capability is added back")
        XCTAssertEqual((container["seccompProfile"] as? [String: Any])?["type"] as? String, "RuntimeDefault")
        XCTAssertEqual(facts["automountToken"] as? Bool, false, "it talks to no Kubernetes API")

        // Writable: the recordings volume (each replica's own claim) and /tmp; the media read-only.
        let mounts = try XCTUnwrap(facts["mounts"] as? [String: [String: Any]])
        let recordings = try XCTUnwrap(mounts["recordings"], "a recordings volume is mounted")
        XCTAssertEqual(recordings["readOnly"] as? Bool, false)
        XCTAssertEqual(facts["claimTemplates"] as? [String], ["recordings"])
        XCTAssertEqual(mounts["media"]?["readOnly"] as? Bool, true)
        XCTAssertEqual(mounts["tmp"]?["path"] as? String, "/tmp")
        XCTAssertEqual((facts["volumes"] as? [String: [String]])?["tmp"], ["emptyDir"])
        let recordingsPath = try XCTUnwrap(recordings["path"] as? String)
        let writable = mounts.values.filter { $0["readOnly"] as? Bool != true }.compactMap { $0["path"] as? String }
        XCTAssertEqual(Set(writable), [recordingsPath, "/tmp"], "nothing else is writable")
        for root in try XCTUnwrap(facts["mediaRoots"] as? [String]) {
            XCTAssertTrue(recordingsPath.hasPrefix(root + "/"), "the recordings (\(recordingsPath)) lie in the media root \(root)")
        }
        let records = try XCTUnwrap(facts["records"] as? [String])
        XCTAssertFalse(records.isEmpty, "a shard shows a recording")
        for record in records { XCTAssertTrue(record.hasPrefix(recordingsPath + "/"), "\(record) is on the recordings volume") }

        // The NetworkPolicy: this pod, ingress only to the control port, only from monitoring.
        let policies = try XCTUnwrap(facts["policies"] as? [[String: Any]])
        XCTAssertEqual(policies.count, 1)
        let spec = try XCTUnwrap(policies.first?["spec"] as? [String: Any])
        let selected = (spec["podSelector"] as? [String: Any])?["matchLabels"] as? [String: String] ?? [:]
        let podLabels = try XCTUnwrap(facts["podLabels"] as? [String: String])
        XCTAssertFalse(selected.isEmpty)
        XCTAssertTrue(selected.allSatisfy { podLabels[$0.key] == $0.value }, "the policy selects the channels' pods")
        XCTAssertEqual(Set(spec["policyTypes"] as? [String] ?? []), ["Ingress", "Egress"])
        let ingress = try XCTUnwrap(spec["ingress"] as? [[String: Any]])
        XCTAssertEqual(ingress.count, 1)
        let ports = try XCTUnwrap(ingress.first?["ports"] as? [[String: Any]])
        XCTAssertEqual(ports.map { "\($0["protocol"] ?? "")/\($0["port"] ?? "")" }, ["TCP/8089"], "only the control port")
        let sources = try XCTUnwrap(ingress.first?["from"] as? [[String: Any]])
        XCTAssertFalse(sources.isEmpty, "an empty from would admit everyone")
        for source in sources {
            XCTAssertNil(source["ipBlock"])
            let namespace = (source["namespaceSelector"] as? [String: Any])?["matchLabels"] as? [String: String] ?? [:]
            let pods = (source["podSelector"] as? [String: Any])?["matchLabels"] as? [String: String] ?? [:]
            XCTAssertFalse(namespace.isEmpty, "only a labelled monitoring namespace: \(source)")
            XCTAssertFalse(pods.isEmpty, "only its monitoring pods: \(source)")
        }
    }

    /// The hardening that `testTheSystemdUnitIsSandboxed` looks for, as `Key=value` lines.
    private static let hardening: [String: String] = [
        "NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateDevices": "yes", "PrivateTmp": "yes", "ProtectHome": "yes",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "SystemCallArchitectures": "native", "CapabilityBoundingSet": "",
        "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
        "RestrictNamespaces": "yes", "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "RestrictRealtime": "yes",
        "RestrictSUIDSGID": "yes", "UMask": "0027",
    ]

    /// The highest `systemd-analyze security` exposure the unit may score (it scored 8.4 "EXPOSED"
    /// before it was sandboxed; see docs/operators-guide.md).
    private static let exposureThreshold = 1.5

    /// The unit's sandbox, read from its text, and its exposure as `systemd-analyze security
    /// --offline=yes` scores it; a copy without the sandbox scores above the threshold.
    func testTheSystemdUnitIsSandboxed() throws {
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        var settings: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<eq]).trimmingCharacters(in: .whitespaces), default: []].append(String(line[line.index(after: eq)...]))
        }
        for (key, value) in Self.hardening { XCTAssertEqual(settings[key], [value], key) }
        XCTAssertTrue(settings["ReadWritePaths"]?.contains { $0.hasSuffix("/recordings") } ?? false,
                      "ProtectSystem=strict leaves a place to record: \(settings["ReadWritePaths"] ?? [])")
        XCTAssertNotNil(settings["MemoryMax"])
        XCTAssertEqual(settings["SystemCallFilter"]?.first, "@system-service")
        XCTAssertNotEqual(settings["User"]?.first ?? "root", "root")

        guard let analyze = ProcessRunner.which("systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed: the unit's settings were checked, its exposure score was not")
        }
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "systemd-security")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        func exposure(of unitText: String, name: String) throws -> Double {
            // An instance's name: a template itself is not analysed.
            let path = dir.appendingPathComponent("livepush-channels@\(name).service").path
            try unitText.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try ProcessRunner.run(analyze, ["security", "--offline=yes", "--no-pager", path], timeout: 60)
            let output = result.stdoutString + result.stderrString
            let line = try XCTUnwrap(output.split(separator: "\n").last { $0.contains("Overall exposure level") }, output)
            let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
            return try XCTUnwrap(score, String(line))
        }
        let score = try exposure(of: text, name: "shard-0")
        print("DeployTests: systemd-analyze security exposure \(score)")
        XCTAssertLessThanOrEqual(score, Self.exposureThreshold)
        // Without the sandbox (only what the unit had before it): far above.
        let keys = Set(Self.hardening.keys).union(["ReadWritePaths", "MemoryMax", "MemoryHigh", "SystemCallFilter", "SystemCallErrorNumber",
                                                   "User", "Group", "AmbientCapabilities", "ProtectProc", "ProcSubset", "RemoveIPC",
                                                   "ProtectClock", "ProtectHostname", "PrivateUsers", "KeyringMode", "PrivateMounts"])
        let bare = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in !keys.contains(String(line.prefix { $0 != "=" })) }.joined(separator: "\n")
        XCTAssertGreaterThan(try exposure(of: bare, name: "bare"), 5, "the score measures the sandbox")
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
