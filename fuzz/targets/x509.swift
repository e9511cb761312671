// fuzz-modules: Crypto
// X.509 certificate parsing (DER and PEM), as reached from attestation statements: whatever
// parses has its extensions read, its signature checked against itself and, as a one-element
// chain, is verified against itself as trust anchor.
import Crypto
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var certificates: [Certificate] = []
    if let certificate = try? Certificate(derRepresentation: bytes) { certificates.append(certificate) }
    if let certificate = try? Certificate(pemRepresentation: String(decoding: bytes, as: UTF8.self)) {
        certificates.append(certificate)
    }
    for certificate in certificates {
        _ = certificate.extension(oid: "2.5.29.19")
        _ = certificate.extension(oid: "1.3.6.1.4.1.45724.1.1.4")
        _ = try? CertificateChain(leaf: certificate).verify(
            trustAnchors: [certificate], at: Date(timeIntervalSince1970: 1_704_067_200))
    }
    if let reader = try? DERReader(bytes) { _ = try? reader.peekTag() }
    return 0
}
