import COpenSSL
import Foundation

/// Why a certificate chain did not verify against the trust anchors. The common causes
/// have their own case; anything else keeps OpenSSL's verification code and text.
public enum CertificateChainError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No trust anchors were given, so nothing can be trusted.
    case noTrustAnchors
    /// No path from the leaf to any trust anchor.
    case untrusted
    /// A certificate in the path is expired at the verification time.
    case expired
    /// A certificate in the path is not yet valid at the verification time.
    case notYetValid
    /// A certificate's signature does not verify with its issuer's key.
    case signatureInvalid
    /// An issuing certificate is not a CA (basicConstraints, keyUsage).
    case notCertificateAuthority
    /// A CA's path length constraint is exceeded.
    case pathLengthExceeded
    /// A certificate carries a critical extension OpenSSL does not process.
    case unhandledCriticalExtension
    /// Any other verification failure: OpenSSL's `X509_V_ERR_*` code and its text.
    case other(code: Int32, reason: String)

    public var description: String {
        switch self {
        case .noTrustAnchors: "no trust anchors"
        case .untrusted: "no path to a trust anchor"
        case .expired: "certificate expired"
        case .notYetValid: "certificate not yet valid"
        case .signatureInvalid: "certificate signature invalid"
        case .notCertificateAuthority: "issuer is not a CA"
        case .pathLengthExceeded: "path length constraint exceeded"
        case .unhandledCriticalExtension: "unhandled critical extension"
        case .other(let code, let reason): "verification failed (\(code)): \(reason)"
        }
    }
}

/// A leaf certificate and the intermediates offered with it (an `x5c` array).
public struct CertificateChain: Sendable, Equatable {
    public var leaf: Certificate
    public var intermediates: [Certificate]

    public init(leaf: Certificate, intermediates: [Certificate] = []) {
        self.leaf = leaf
        self.intermediates = intermediates
    }

    /// Parses DER certificates, leaf first.
    public init(derCertificates: [[UInt8]]) throws(CertificateError) {
        guard let first = derCertificates.first else { throw .malformed("empty chain") }
        var intermediates: [Certificate] = []
        for der in derCertificates.dropFirst() { intermediates.append(try Certificate(derRepresentation: der)) }
        self.init(leaf: try Certificate(derRepresentation: first), intermediates: intermediates)
    }

    /// Verifies that the leaf chains, through the intermediates, to one of `trustAnchors`,
    /// with every certificate valid at `time` (injected, so tests and offline checks of old
    /// responses are deterministic).
    ///
    /// An anchor need not be self-signed: a trusted intermediate ends the path there
    /// (`X509_V_FLAG_PARTIAL_CHAIN`), which is how attestation roots for a model are
    /// often distributed. No purpose or policy is required: attestation certificates
    /// are not TLS certificates.
    public func verify(trustAnchors: [Certificate], at time: Date) throws(CertificateChainError) {
        guard !trustAnchors.isEmpty else { throw .noTrustAnchors }
        guard let store = X509_STORE_new() else { throw .other(code: -1, reason: "X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in trustAnchors {
            // X509_STORE_add_cert takes its own reference.
            guard X509_STORE_add_cert(store, anchor.handle.pointer) == 1 else {
                ERR_clear_error()
                throw .other(code: -1, reason: "X509_STORE_add_cert")
            }
        }
        guard let untrusted = copenssl_sk_X509_new_null() else { throw .other(code: -1, reason: "sk_X509_new_null") }
        // The stack borrows the intermediates' references; `self` keeps them alive.
        defer { copenssl_sk_X509_free(untrusted) }
        for certificate in intermediates {
            guard copenssl_sk_X509_push(untrusted, certificate.handle.pointer) > 0 else {
                throw .other(code: -1, reason: "sk_X509_push")
            }
        }
        guard let context = X509_STORE_CTX_new() else { throw .other(code: -1, reason: "X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrusted) == 1 else {
            ERR_clear_error()
            throw .other(code: -1, reason: "X509_STORE_CTX_init")
        }
        guard let parameters = X509_STORE_CTX_get0_param(context) else {
            throw .other(code: -1, reason: "X509_STORE_CTX_get0_param")
        }
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        let result = X509_verify_cert(context)
        let code = X509_STORE_CTX_get_error(context)
        ERR_clear_error()
        withExtendedLifetime(self) {}
        withExtendedLifetime(trustAnchors) {}
        guard result != 1 else { return }
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: throw .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: throw .notYetValid
        case X509_V_ERR_CERT_SIGNATURE_FAILURE: throw .signatureInvalid
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
            X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
            throw .untrusted
        case X509_V_ERR_INVALID_CA: throw .notCertificateAuthority
        case X509_V_ERR_PATH_LENGTH_EXCEEDED: throw .pathLengthExceeded
        case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION: throw .unhandledCriticalExtension
        default:
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown"
            throw .other(code: code, reason: text)
        }
    }
}
