// libFuzzer harness; built and run by scripts/fuzz.sh chunk-stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunkStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.chunkStream.fuzz(data, size)
}
