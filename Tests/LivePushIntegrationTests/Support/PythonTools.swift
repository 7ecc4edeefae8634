import Foundation
import XCTest

/// Python test tools from PyPI (threefive...), in a virtual environment of the tests' own,
/// made once per machine and reused.
enum PythonTools {
    static let venv = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("livepush-test-venv")

    /// The venv's python, with `packages` installed.
    static func python(with packages: [String]) throws -> String {
        let python = venv.appendingPathComponent("bin/python").path
        if !FileManager.default.fileExists(atPath: python) {
            let made = try ProcessRunner.run("python3", ["-m", "venv", venv.path], timeout: 120)
            guard made.succeeded else { throw XCTSkip("python3 -m venv failed: \(made.summary)") }
        }
        let check = try ProcessRunner.run(python, ["-c", packages.map { "import \($0)" }.joined(separator: "; ")], timeout: 60)
        if !check.succeeded {
            let install = try ProcessRunner.run(python, ["-m", "pip", "install", "--quiet"] + packages, timeout: 300)
            guard install.succeeded else { throw XCTSkip("pip install \(packages) failed: \(install.summary)") }
        }
        return python
    }

    /// Decodes base64 SCTE-35 cues with threefive (an independent reader): one JSON object each.
    static func threefive(_ cues: [String]) throws -> [[String: Any]] {
        let python = try python(with: ["threefive"])
        let script = """
        import json, sys, threefive
        for line in sys.argv[1:]:
            cue = threefive.Cue(line)
            cue.decode()
            print(json.dumps(cue.get(), default=str))
        """
        let result = try ProcessRunner.run(python, ["-c", script] + cues, timeout: 60)
        XCTAssertTrue(result.succeeded, result.summary)
        return result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

/// Prometheus text parsed by `prometheus_client` (the official Python client's parser).
struct ParsedMetrics {
    var samples: [(name: String, labels: [String: String], value: Double)]

    subscript(name: String, labels: [String: String]) -> Double? {
        samples.first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }?.value
    }
}

extension PythonTools {
    static func prometheus(_ text: String) throws -> ParsedMetrics {
        let python = try python(with: ["prometheus_client"])
        let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        for family in text_string_to_metric_families(open(sys.argv[1]).read()):
            for sample in family.samples:
                print(json.dumps({"name": sample.name, "labels": sample.labels, "value": sample.value}))
        """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try ProcessRunner.run(python, ["-c", script, file.path], timeout: 60)
        XCTAssertTrue(result.succeeded, result.summary)
        return ParsedMetrics(samples: result.stdoutString.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["name"] as? String, let value = object["value"] as? Double else { return nil }
            return (name, object["labels"] as? [String: String] ?? [:], value)
        })
    }
}
