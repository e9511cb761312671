// fuzz-modules: Crypto WebAuthnCore
// The binary and JSON structures inside a WebAuthn response: COSE keys (and a signature check
// with each key that decodes), authenticator data, attestation objects and client data JSON.
// The first byte chooses the parser so one corpus covers all of them.
import WebAuthnCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch selector % 4 {
    case 0:
        if let key = try? COSEKey(cbor: bytes) {
            _ = key.isValidSignature(Array(bytes.prefix(72)), for: Array(bytes.suffix(32)))
        }
    case 1:
        if let parsed = try? ParsedAuthenticatorData(from: bytes) { _ = parsed }
    case 2:
        if let parsed = try? ParsedAttestationObject(from: bytes) { _ = parsed }
    default:
        if let parsed = try? CollectedClientData(from: bytes) { _ = parsed }
    }
    return 0
}
