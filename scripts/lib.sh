# Shared by the scripts in this folder: installs what the project needs on Debian 12.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages: the C libraries we link, and PostgreSQL for the embedded database.
BUILD_PACKAGES=(libpq-dev libssl-dev libargon2-dev postgresql pkg-config curl openssl)

# install_packages PKG… : apt-get install the packages that are missing (as root, or via sudo).
install_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # The postgresql package would start a system-wide cluster; we run our own clusters.
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

require_swift() {
    command -v swift >/dev/null || { echo "swift is not on PATH: install the Swift 6 toolchain first" >&2; exit 1; }
}
