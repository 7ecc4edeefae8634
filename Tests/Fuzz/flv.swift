// libFuzzer harness; built and run by scripts/fuzz.sh flv.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFLV(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.flv.fuzz(data, size)
}
