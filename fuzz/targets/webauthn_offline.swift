// fuzz-modules: Crypto WebAuthnCore
// The offline tools on arbitrary documents: `webauthn-tool verify` and `… inspect`
// read files a support person was handed, so nothing in them may crash the tool.
import WebAuthnCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let verified = OfflineVerification.run(document: bytes)
    guard (0...2).contains(verified.exitCode) else { fatalError("exit code \(verified.exitCode)") }
    let inspected = ResponseInspection.inspect(document: bytes)
    guard (0...2).contains(inspected.exitCode) else { fatalError("exit code \(inspected.exitCode)") }
    return 0
}
