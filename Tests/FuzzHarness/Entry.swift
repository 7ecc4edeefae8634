import Foundation

// libFuzzer harness of the app-level targets; built and run by scripts/fuzz-app.sh TARGET.
private let target: AppFuzzTarget = {
    guard let name = ProcessInfo.processInfo.environment["LIVEPUSH_FUZZ_TARGET"], let target = AppFuzzTarget(rawValue: name) else {
        fatalError("set LIVEPUSH_FUZZ_TARGET to one of " + AppFuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzApp(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.fuzz(data, size)
}
