// fuzz-modules: Crypto WebAuthnCore
// The strict CBOR decoder, as a whole item and as a prefix; whatever decodes must encode
// back to the bytes it came from (the decoder accepts only shortest, definite-length forms).
import WebAuthnCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? CBORDecoder().decode(bytes), CBOREncoder.encode(value) != bytes {
        fatalError("decoded CBOR does not re-encode to the same bytes")
    }
    _ = try? CBORDecoder(maxDepth: 4, maxItems: 64, maxInputLength: 1024).decode(bytes)
    if let (value, consumed) = try? CBORDecoder().decodePrefix(bytes) {
        guard consumed > 0, consumed <= bytes.count else { fatalError("consumed \(consumed) of \(bytes.count)") }
        _ = value
    }
    return 0
}
