// libFuzzer harness; built and run by scripts/fuzz.sh amf0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAMF0(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.amf0.fuzz(data, size)
}
