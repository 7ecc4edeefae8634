// libFuzzer harness; built and run by scripts/fuzz.sh handshake.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.handshake.fuzz(data, size)
}
