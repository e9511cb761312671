/// Reads the big-endian TPM 2.0 wire structures; every read is bounds-checked.
struct TPMReader {
    struct Truncated: Error {}

    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func read(_ count: Int) throws(Truncated) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw Truncated() }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint16() throws(Truncated) -> UInt16 {
        try read(2).reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func uint32() throws(Truncated) -> UInt32 {
        try read(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A TPM2B: a 16-bit size followed by that many bytes.
    mutating func sized() throws(Truncated) -> [UInt8] {
        try read(Int(uint16()))
    }
}

/// `TPMT_PUBLIC`, restricted to RSA and ECC keys (TPM 2.0 Part 2, 12.2.4).
struct TPMPublicArea {
    static let algRSA: UInt16 = 0x0001
    static let algECC: UInt16 = 0x0023
    static let algNull: UInt16 = 0x0010
    static let curveNISTP256: UInt16 = 0x0003

    enum Key {
        case rsa(modulus: [UInt8], exponent: UInt32)
        case ecc(curve: UInt16, x: [UInt8], y: [UInt8])
    }

    var nameAlg: UInt16
    var key: Key

    init(_ bytes: [UInt8]) throws(TPMReader.Truncated) {
        var reader = TPMReader(bytes)
        let type = try reader.uint16()
        nameAlg = try reader.uint16()
        _ = try reader.uint32()  // objectAttributes
        _ = try reader.sized()  // authPolicy
        // TPMT_SYM_DEF_OBJECT: algorithm, then keyBits and mode unless TPM_ALG_NULL.
        if try reader.uint16() != Self.algNull { _ = try reader.read(4) }
        switch type {
        case Self.algRSA:
            // TPMT_RSA_SCHEME: scheme, then hashAlg unless TPM_ALG_NULL; keyBits; exponent.
            if try reader.uint16() != Self.algNull { _ = try reader.uint16() }
            _ = try reader.uint16()
            let exponent = try reader.uint32()
            key = .rsa(modulus: try reader.sized(), exponent: exponent)
        case Self.algECC:
            // TPMT_ECC_SCHEME, curveID, TPMT_KDF_SCHEME, then TPMS_ECC_POINT.
            if try reader.uint16() != Self.algNull { _ = try reader.uint16() }
            let curve = try reader.uint16()
            if try reader.uint16() != Self.algNull { _ = try reader.uint16() }
            let x = try reader.sized()
            key = .ecc(curve: curve, x: x, y: try reader.sized())
        default:
            throw TPMReader.Truncated()
        }
        guard reader.isAtEnd else { throw TPMReader.Truncated() }
    }

    /// Whether this is the credential public key (an exponent of 0 means 65537).
    func matches(_ credentialKey: COSEKey) -> Bool {
        switch (key, credentialKey) {
        case (.rsa(let modulus, let exponent), .rsa(let n, let e, _)):
            let effective = exponent == 0 ? 65537 : exponent
            let eValue = e.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return e.count <= 8 && UInt64(effective) == eValue && modulus.drop { $0 == 0 } == n.drop { $0 == 0 }
        case (.ecc(let curve, let x, let y), .ec2P256(let credentialX, let credentialY)):
            return curve == Self.curveNISTP256 && x == credentialX && y == credentialY
        default:
            return false
        }
    }
}

/// `TPMS_ATTEST` carrying `TPMS_CERTIFY_INFO` (TPM 2.0 Part 2, 10.12.12).
struct TPMCertifyInfo {
    /// TPM_GENERATED_VALUE: the structure was made inside a TPM.
    static let generatedValue: UInt32 = 0xFF54_4347
    /// TPM_ST_ATTEST_CERTIFY.
    static let attestCertify: UInt16 = 0x8017

    var magic: UInt32
    var type: UInt16
    var extraData: [UInt8]
    var attestedName: [UInt8]

    init(_ bytes: [UInt8]) throws(TPMReader.Truncated) {
        var reader = TPMReader(bytes)
        magic = try reader.uint32()
        type = try reader.uint16()
        _ = try reader.sized()  // qualifiedSigner
        extraData = try reader.sized()
        _ = try reader.read(17)  // clockInfo: clock, resetCount, restartCount, safe
        _ = try reader.read(8)  // firmwareVersion
        attestedName = try reader.sized()
        _ = try reader.sized()  // qualifiedName
        guard reader.isAtEnd else { throw TPMReader.Truncated() }
    }
}
