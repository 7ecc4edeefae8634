import Foundation
import XCTest

/// The `livepush` executable that `swift test` builds next to the test bundle, run the way a
/// user runs it.
enum LivePushCLI {
    static var binary: String? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [directory, directory.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("livepush").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func run(_ arguments: [String], timeout: TimeInterval = 60, environment: [String: String]? = nil) throws -> ProcessRunner.Result {
        let binary = try XCTUnwrap(binary, "livepush executable not found next to the test bundle")
        return try ProcessRunner.run(binary, arguments, timeout: timeout, environment: environment)
    }
}
