// libFuzzer harness; built and run by scripts/fuzz.sh scte35.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSCTE35(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.scte35.fuzz(data, size)
}
