import Foundation
import Testing
import Crypto
@testable import WebAuthnTestSupport

/// PEM parsing reads its input through an OpenSSL memory BIO that does not copy the text.
/// These inputs come from the fuzz corpus; in an optimised AddressSanitizer build
/// (`fuzz/run 60 x509`) the first one showed the BIO reading the text after Swift had
/// already freed it. The checks here pin the results of parsing them.
@Suite struct PEMParsingTests {
    /// A DER certificate handed to the PEM parser as text, like fuzz/corpus/x509/appleRoot.der.
    @Test func derBytesAsTextAreNotPEM() throws {
        let root = try Certificate(pemRepresentation: TestPKI.rootPEM)
        let text = String(decoding: root.derRepresentation, as: UTF8.self)
        #expect(throws: CertificateError.invalidPEM) { try Certificate(pemRepresentation: text) }
    }

    /// The block is found after leading text, the text after it is ignored, and parsing the
    /// same text many times gives the same certificate every time.
    @Test func blockAmidOtherTextParsesRepeatedly() throws {
        let expected = try Certificate(pemRepresentation: TestPKI.rootPEM)
        let text = "issued for tests\n" + TestPKI.rootPEM + "\ntrailing words"
        for _ in 0..<50 {
            #expect(try Certificate(pemRepresentation: text) == expected)
        }
    }

    /// An armour whose body is not base64 is refused.
    @Test func brokenBodyIsRefused() {
        let text = "-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n"
        #expect(throws: CertificateError.invalidPEM) { try Certificate(pemRepresentation: text) }
    }
}
