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

# bounded SECONDS COMMAND… : runs COMMAND; when it is still running after SECONDS, prints its
# process tree and every thread's stack (gdb, when installed), kills it and its descendants, and
# fails. A hung test then ends the run with the place it hung, instead of running out CI's time.
bounded() {
    local limit=$1
    shift
    "$@" &
    local pid=$!
    (
        for ((second = 0; second < limit; second++)); do
            sleep 1
            kill -0 "$pid" 2>/dev/null || exit 0
        done
        local tree
        tree=$(descendants "$pid")
        {
            echo "still running after ${limit}s, killed: $*"
            ps -o pid,ppid,etimes,stat,wchan:24,args -p "$(echo $pid $tree | tr ' ' ,)" || true
            if command -v gdb >/dev/null; then
                for process in $pid $tree; do
                    echo "--- threads of $process: $(tr '\0' ' ' < "/proc/$process/cmdline" 2>/dev/null | cut -c1-200)"
                    timeout 60 gdb -p "$process" -batch -ex "thread apply all bt 30" 2>/dev/null |
                        grep -E '^(Thread|#)' || true
                done
            fi
        } >&2
        kill -KILL "$pid" $tree 2>/dev/null || true
    ) &
    local watchdog=$!
    local status=0
    wait "$pid" || status=$?
    wait "$watchdog" 2>/dev/null || true
    return "$status"
}

# descendants PID : the process ids below PID, children first.
descendants() {
    local child
    for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}
