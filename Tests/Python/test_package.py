"""The Debian package (scripts/package) and the systemd unit: the package is built from the
binary under test, its metadata and file list read back with dpkg-deb, and the extracted
binary run with the packaged example config until /readyz answers; sd_notify is received
on a Unix datagram socket bound here; the unit is checked with systemd-analyze."""

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from auth_server import ROOT, binary, free_port, wait_ready

UNIT = ROOT / "packaging" / "auth-server.service"


def expected_version():
    path = ROOT / "VERSION"
    return path.read_text().strip() if path.exists() else "0.0.0"


@pytest.fixture(scope="module")
def package():
    out = tempfile.mkdtemp(prefix="auth-server-deb-")
    try:
        result = subprocess.run([str(ROOT / "scripts" / "package"), "--binary", binary(), "--out", out],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        deb = Path(result.stdout.strip().splitlines()[-1])
        assert deb == Path(out) / f"auth-server_{expected_version()}_amd64.deb"
        yield deb
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def extracted(package):
    root = Path(tempfile.mkdtemp(prefix="auth-server-root-"))
    os.chmod(root, 0o755)  # the embedded cluster may run as the postgres user
    try:
        subprocess.run(["dpkg-deb", "-x", str(package), str(root)], check=True)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_metadata_names_the_version_and_the_libraries_the_binary_links(package):
    assert field(package, "Package") == "auth-server"
    assert field(package, "Version") == expected_version()
    assert field(package, "Architecture") == "amd64"
    depends = [entry.strip() for entry in field(package, "Depends").split(",")]
    names = [entry.split(" ")[0] for entry in depends]
    for required in ("libpq5", "libssl3", "libargon2-1", "libc6", "postgresql", "adduser"):
        assert required in names, depends
    assert len(names) == len(set(names)), depends
    # Every dependency is a real Debian package: the one installed here that owns the library.
    for name in names:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
        assert status.stdout == "install ok installed", name
    # The minimum versions come from the libraries' shlibs files.
    assert any(re.fullmatch(r"libssl3 \(>= 3[0-9.~]*\)", entry) for entry in depends), depends


def test_file_list_holds_the_binary_static_files_migrations_config_and_unit(package):
    listing = subprocess.run(["dpkg-deb", "-c", str(package)], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    entries = {}
    for line in listing:
        parts = line.split()
        entries[parts[5].removeprefix(".")] = (parts[0], parts[1])
    assert entries["/usr/bin/auth-server"] == ("-rwxr-xr-x", "root/root")
    assert entries["/etc/auth-server/config.json"][1] == "root/root"
    assert "/lib/systemd/system/auth-server.service" in entries
    assert "/usr/share/doc/auth-server/config.md" in entries
    for migration in (ROOT / "migrations").glob("*.sql"):
        assert f"/usr/share/auth-server/migrations/{migration.name}" in entries
    for static in (ROOT / "public").rglob("*"):
        if static.is_file():
            assert f"/usr/share/auth-server/public/{static.relative_to(ROOT / 'public')}" in entries
    # Every file belongs to root; the state directory is made by postinst, not shipped.
    assert {owner for _, owner in entries.values()} == {"root/root"}
    assert not any(path.startswith("/var/") for path in entries)


def test_conffiles_and_maintainer_scripts(package):
    control = Path(tempfile.mkdtemp(prefix="auth-server-control-"))
    try:
        subprocess.run(["dpkg-deb", "-e", str(package), str(control)], check=True)
        assert (control / "conffiles").read_text().split() == ["/etc/auth-server/config.json"]
        for script in ("postinst", "prerm", "postrm"):
            assert os.access(control / script, os.X_OK), script
            subprocess.run(["sh", "-n", str(control / script)], check=True)
        postinst = (control / "postinst").read_text()
        assert "adduser --system" in postinst and "/var/lib/auth-server" in postinst

        # postrm on a root of its own (dpkg's DPKG_ROOT): remove keeps the data, purge deletes it.
        fake = control / "fake-root"
        database = fake / "var/lib/auth-server/postgres/PG_VERSION"
        database.parent.mkdir(parents=True)
        database.write_text("15\n")
        (fake / "etc/auth-server").mkdir(parents=True)
        env = dict(os.environ, DPKG_ROOT=str(fake))
        subprocess.run([str(control / "postrm"), "remove"], env=env, check=True)
        assert database.read_text() == "15\n"
        subprocess.run([str(control / "postrm"), "purge"], env=env, check=True)
        assert not (fake / "var/lib/auth-server").exists()
        assert not (fake / "etc/auth-server").exists()
    finally:
        shutil.rmtree(control, ignore_errors=True)


def bind_notify_socket(name):
    """A Unix datagram socket like systemd's: `name` is a path, or `@…` for an abstract name."""
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind("\0" + name[1:] if name.startswith("@") else name)
    # The sender's credentials, as systemd reads them for NotifyAccess=main.
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    return receiver


def receive(receiver, process, seconds=90):
    """The next datagram's KEY=VALUE lines; fails when the process exits or time runs out,
    or when another process (the embedded PostgreSQL, say) sent it."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        receiver.settimeout(0.5)
        try:
            data, ancillary, _, _ = receiver.recvmsg(4096, socket.CMSG_SPACE(struct.calcsize("3i")))
        except socket.timeout:
            assert process.poll() is None, "the server exited before notifying"
            continue
        senders = [struct.unpack("3i", payload[:12])[0] for level, kind, payload in ancillary
                   if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS]
        assert senders == [process.pid], f"{data!r} sent by {senders}, not the server ({process.pid})"
        return data.decode().splitlines()
    pytest.fail("no sd_notify datagram arrived")


def readyz(base):
    with urllib.request.urlopen(base + "/readyz", timeout=5) as response:
        return response.status


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def test_extracted_binary_serves_with_the_packaged_config(extracted):
    executable = extracted / "usr/bin/auth-server"
    libraries = subprocess.run(["ldd", str(executable)], capture_output=True, text=True, check=True).stdout
    assert "not found" not in libraries
    loaded = dict(re.findall(r"^\s*(\S+) => (/\S+)", libraries, re.MULTILINE))
    shipped = extracted / "usr/lib/auth-server"
    if shipped.exists():
        # A Swift runtime the package ships is the one the binary loads.
        for library in shipped.iterdir():
            assert os.path.realpath(loaded[library.name]) == str(library), library.name
    else:
        assert "libswiftCore.so" not in loaded  # the Swift runtime is linked statically

    config = json.loads((extracted / "etc/auth-server/config.json").read_text())
    assert config["data_dir"] == "/var/lib/auth-server"
    assert config["public_dir"] == "/usr/share/auth-server/public"
    # Adjusted only for a free port, a throwaway database and the temporary root.
    port = free_port()
    config["listen"] = f"127.0.0.1:{port}"
    config["issuer"] = f"http://localhost:{port}"
    config["data_dir"] = str(extracted / config["data_dir"].lstrip("/"))
    config["public_dir"] = str(extracted / config["public_dir"].lstrip("/"))
    Path(config["data_dir"]).mkdir(parents=True)
    for folder in (extracted / "var", extracted / "var/lib", Path(config["data_dir"])):
        os.chmod(folder, 0o755)
    config_path = extracted / "etc/auth-server/test-config.json"
    config_path.write_text(json.dumps(config))
    notify_path = extracted / "notify.sock"
    receiver = bind_notify_socket(str(notify_path))
    env = {key: value for key, value in os.environ.items() if key != "AUTH_SERVER_MIGRATIONS"}
    env["NOTIFY_SOCKET"] = str(notify_path)
    log_path = extracted / "server.log"
    with open(log_path, "w") as log:
        # Run from / so that the migrations are found beside the binary, as installed.
        process = subprocess.Popen([str(executable), "serve", "--config", str(config_path)], cwd="/", env=env,
                                   stdout=log, stderr=log)
    try:
        assert receive(receiver, process)[0] == "READY=1", log_path.read_text()[-2000:]
        wait_ready(f"{config['issuer']}/readyz", process, log_path, seconds=10)
        with urllib.request.urlopen(config["issuer"] + "/static/css/app.css", timeout=5) as response:
            assert response.status == 200
            assert response.read() == (ROOT / "public/css/app.css").read_bytes()
        assert "database.migrated" in log_path.read_text()
    finally:
        stop(process)
        receiver.close()
    assert process.returncode == 0, log_path.read_text()[-2000:]


def test_sd_notify_ready_after_readyz_answers_then_reloading_and_stopping():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-notify-"))
    os.chmod(folder, 0o755)
    name = "@auth-server-test-" + uuid.uuid4().hex
    receiver = bind_notify_socket(name)
    port = free_port()
    base = f"http://localhost:{port}"
    config = {"issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(folder / "var"),
              "public_dir": str(ROOT / "public"), "clients": []}
    config_path = folder / "config.json"
    config_path.write_text(json.dumps(config))
    log_path = folder / "server.log"
    try:
        with open(log_path, "w") as log:
            process = subprocess.Popen([binary(), "serve", "--config", str(config_path)], cwd=ROOT,
                                       env=dict(os.environ, NOTIFY_SOCKET=name), stdout=log, stderr=log)
        try:
            # The first datagram is READY=1, and by then /readyz answers at once.
            message = receive(receiver, process)
            assert message[0] == "READY=1", message
            assert readyz(base) == 200
            assert "database.migrated" in log_path.read_text()

            process.send_signal(signal.SIGHUP)
            reloading = receive(receiver, process, seconds=30)
            assert reloading[0] == "RELOADING=1", reloading
            assert re.fullmatch(r"MONOTONIC_USEC=[0-9]+", reloading[1]), reloading
            assert receive(receiver, process, seconds=30)[0] == "READY=1"
            assert "step=done" in log_path.read_text()

            process.terminate()
            assert receive(receiver, process, seconds=30) == ["STOPPING=1"]
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                stop(process)
    finally:
        receiver.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_serve_without_notify_socket_sends_nothing_and_a_bad_one_is_logged():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-notify-"))
    os.chmod(folder, 0o755)
    port = free_port()
    base = f"http://localhost:{port}"
    config_path = folder / "config.json"
    config_path.write_text(json.dumps({"issuer": base, "listen": f"127.0.0.1:{port}",
                                       "data_dir": str(folder / "var"), "public_dir": str(ROOT / "public"),
                                       "clients": []}))
    log_path = folder / "server.log"
    try:
        with open(log_path, "w") as log:
            process = subprocess.Popen([binary(), "serve", "--config", str(config_path)], cwd=ROOT,
                                       env=dict(os.environ, NOTIFY_SOCKET="relative/notify.sock"), stdout=log,
                                       stderr=log)
        try:
            wait_ready(base + "/readyz", process, log_path)
            deadline = time.time() + 10
            while "systemd.notify" not in log_path.read_text() and time.time() < deadline:
                time.sleep(0.1)
            assert "NOTIFY_SOCKET must be an absolute path or start with @" in log_path.read_text()
        finally:
            stop(process)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def unit_settings():
    settings = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def test_unit_declares_notify_reload_restart_and_hardening():
    settings = unit_settings()
    assert settings["Type"] == ["notify"]
    assert settings["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    assert settings["Restart"] == ["on-failure"]
    assert settings["User"] == ["auth-server"]
    assert settings["StandardError"] == ["journal"]
    for key, value in {"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                       "PrivateDevices": "yes", "NoNewPrivileges": "yes", "CapabilityBoundingSet": "",
                       "SystemCallFilter": "@system-service",
                       "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6"}.items():
        assert value in settings[key], key
    # The state directory is the only one it may write.
    assert settings["ReadWritePaths"] == ["/var/lib/auth-server"]
    config = json.loads((ROOT / "packaging" / "config.json").read_text())
    assert config["data_dir"] == "/var/lib/auth-server"


def systemd_analyze():
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.skip("systemd-analyze is absent on this machine: the unit is not analysed")
    return path


def test_systemd_analyze_verify(extracted, tmp_path):
    analyze = systemd_analyze()
    # The packaged unit, with ExecStart naming the extracted binary (verify checks that the
    # command exists); an unknown or misspelt setting is reported on standard error.
    unit = (extracted / "lib/systemd/system/auth-server.service").read_text()
    assert "ExecStart=/usr/bin/auth-server serve " in unit
    (tmp_path / "auth-server.service").write_text(
        unit.replace("/usr/bin/auth-server", str(extracted / "usr/bin/auth-server")))
    result = subprocess.run([analyze, "verify", "--man=no", str(tmp_path / "auth-server.service")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip() == "", result.stderr


def test_systemd_analyze_security_exposure_is_at_most_2(extracted):
    analyze = systemd_analyze()
    result = subprocess.run([analyze, "security", "--offline=true", str(UNIT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r"Overall exposure level for auth-server\.service: ([0-9.]+) (\w+)", result.stdout)
    assert match, result.stdout[-2000:]
    assert float(match.group(1)) <= 2.0, result.stdout
    assert match.group(2) == "OK"
    # The packaged unit is this one.
    assert (extracted / "lib/systemd/system/auth-server.service").read_text() == UNIT.read_text()


def test_package_refuses_a_missing_binary_clearly():
    result = subprocess.run([str(ROOT / "scripts" / "package"), "--binary", "/nonexistent/auth-server"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "/nonexistent/auth-server is not an executable file" in result.stderr
    result = subprocess.run([str(ROOT / "scripts" / "package"), "--bogus"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "unknown argument: --bogus" in result.stderr
