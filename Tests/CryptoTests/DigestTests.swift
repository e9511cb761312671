import Foundation
import Testing
@testable import Crypto

@Suite struct DigestTests {
    // FIPS 180-4 examples (NIST CSRC "SHA-2" example values), message "abc".
    @Test func sha256OfABC() {
        #expect(SHA256.hash(data: Array("abc".utf8)).hex
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func sha384OfABC() {
        #expect(SHA384.hash(data: Array("abc".utf8)).hex
            == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
    }

    @Test func sha512OfABC() {
        #expect(SHA512.hash(data: Array("abc".utf8)).hex
            == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test func emptyInputAndEquality() {
        let empty = SHA256.hash(data: [UInt8]())
        #expect(empty.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(empty == SHA256.hash(data: Data()))
        #expect(empty != SHA256.hash(data: [0]))
        #expect(Array(empty).count == 32)
    }

    // RFC 4231 §4.2, test case 1.
    @Test func hmacSHA256RFC4231Case1() {
        let key = SymmetricKey(bytes: [UInt8](repeating: 0x0b, count: 20))
        let mac = HMAC.authenticationCode(for: Array("Hi There".utf8), using: key)
        #expect(mac.hex == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(HMAC.isValidAuthenticationCode(mac.bytes, authenticating: Array("Hi There".utf8), using: key))
        #expect(!HMAC.isValidAuthenticationCode(mac.bytes.dropLast(), authenticating: Array("Hi There".utf8), using: key))
    }

    // RFC 4231 §4.3, test case 2 (short key "Jefe"), and an empty key.
    @Test func hmacKeys() {
        let mac = HMAC.authenticationCode(for: Array("what do ya want for nothing?".utf8), using: SymmetricKey(bytes: Array("Jefe".utf8)))
        #expect(mac.hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let empty = HMAC.authenticationCode(for: [UInt8](), using: SymmetricKey(bytes: [UInt8]()))
        #expect(empty.hex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        let sha512 = HMAC.authenticationCode(for: [UInt8](), using: SymmetricKey(bytes: [UInt8]()), hashFunction: .sha512)
        #expect(sha512.bytes.count == 64)
    }

    @Test func randomBytesDiffer() {
        let a = SecureRandom.bytes(count: 32)
        let b = SecureRandom.bytes(count: 32)
        #expect(a.count == 32 && a != b)
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        #expect(SymmetricKey(size: .bits256).bitCount == 256)
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(constantTimeEquals([UInt8](), Data()))
    }
}

@Suite struct Base64URLTests {
    // RFC 4648 §10 test vectors, in the URL-safe alphabet without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func urlAlphabet() throws {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(try Base64URL.decode("-_8") == [0xfb, 0xff])
    }

    @Test(arguments: ["Zg==", "Zm9v YmFy", "+/8", "Z", "Zh", "Zm9vY!"])
    func rejectsMalformed(text: String) {
        #expect(throws: CryptoError.invalidBase64URL) { try Base64URL.decode(text) }
    }
}
