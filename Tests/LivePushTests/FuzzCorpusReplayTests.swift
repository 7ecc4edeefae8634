import Foundation
import XCTest

/// Replays the fuzz corpus and every fixed finding (Tests/Fuzz/Corpus|Regressions/<target>/)
/// through the same checks the libFuzzer harnesses run (see ``FuzzTarget``), so a parser change
/// that breaks on any of them fails here without fuzzing.
final class FuzzCorpusReplayTests: XCTestCase {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    func testCorpus() throws {
        for target in FuzzTarget.allCases {
            let inputs = try Self.inputs(in: "Corpus", target)
            XCTAssertFalse(inputs.isEmpty, "no corpus for \(target.rawValue)")
            try replay(inputs, target)
        }
    }

    func testRegressions() throws {
        for target in FuzzTarget.allCases {
            try replay(try Self.inputs(in: "Regressions", target), target)
        }
    }

    /// The app-level targets (``AppFuzzTarget``), the same way.
    func testAppCorpusAndRegressions() throws {
        for target in AppFuzzTarget.allCases {
            let corpus = try Self.inputs(in: "Corpus", target.rawValue)
            XCTAssertFalse(corpus.isEmpty, "no corpus for \(target.rawValue)")
            for input in corpus + (try Self.inputs(in: "Regressions", target.rawValue)) {
                XCTAssertNil(target.check([UInt8](try Data(contentsOf: input))), "\(target.rawValue): \(input.lastPathComponent)")
            }
        }
    }

    private func replay(_ inputs: [URL], _ target: FuzzTarget) throws {
        for input in inputs {
            let bytes = [UInt8](try Data(contentsOf: input))
            XCTAssertNil(target.check(bytes), "\(target.rawValue): \(input.lastPathComponent)")
        }
    }

    /// The files of `<kind>/<target>/`, none if there is no such folder.
    static func inputs(in kind: String, _ target: FuzzTarget) throws -> [URL] {
        try inputs(in: kind, target.rawValue)
    }

    static func inputs(in kind: String, _ target: String) throws -> [URL] {
        let folder = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
