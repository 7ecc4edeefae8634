// libFuzzer harness; built and run by scripts/fuzz.sh server-reply.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerReply(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.serverReply.fuzz(data, size)
}
