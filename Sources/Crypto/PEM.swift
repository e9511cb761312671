import COpenSSL

/// PEM armour (RFC 7468): a label and the DER bytes inside. Parsing the armour is kept
/// apart from parsing the DER so every key type accepts exactly the labels it knows.
struct PEMDocument {
    let label: String
    let der: [UInt8]

    /// Reads the first PEM block of `text` whose label is not `EC PARAMETERS` (which
    /// `openssl ecparam -genkey` writes before the key).
    init(parsing text: String) throws(CryptoError) {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.count <= Int(Int32.max) else { throw .invalidPEM }
        // A memory BIO reads the buffer in place (it does not copy), so every read happens
        // inside `withUnsafeBytes`: outside it the optimiser may already have freed `utf8`.
        let block = utf8.withUnsafeBytes { buffer -> (label: String, der: [UInt8])? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return Self.readBlock(bio)
        }
        guard let block else { throw .invalidPEM }
        self.label = block.label
        self.der = block.der
    }

    private static func readBlock(_ bio: OpaquePointer) -> (label: String, der: [UInt8])? {
        for _ in 0..<4 {
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1, let name, let data else {
                ERR_clear_error()
                return nil
            }
            defer {
                OPENSSL_free_shim(name)
                OPENSSL_free_shim(header)
                OPENSSL_free_shim(data)
            }
            let label = String(cString: name)
            if label == "EC PARAMETERS" { continue }
            // Encrypted PEM (Proc-Type headers) is not supported.
            if let header, header.pointee != 0 { return nil }
            return (label, Array(UnsafeBufferPointer(start: data, count: length)))
        }
        return nil
    }

    init(label: String, der: [UInt8]) {
        self.label = label
        self.der = der
    }

    /// The armoured text, 64 characters per line, ending with a newline.
    var text: String {
        let body = Base64Codec.standard.encode(der)
        var lines = ["-----BEGIN \(label)-----"]
        var chars = Substring(body)
        while !chars.isEmpty {
            lines.append(String(chars.prefix(64)))
            chars = chars.dropFirst(64)
        }
        let padding = String(repeating: "=", count: (4 - body.count % 4) % 4)
        if padding.isEmpty == false { lines[lines.count - 1] += padding }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}

private func OPENSSL_free_shim(_ pointer: UnsafeMutableRawPointer?) {
    CRYPTO_free(pointer, #fileID, #line)
}
