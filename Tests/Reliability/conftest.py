"""Fixtures for the scale-out tests: one PostgreSQL cluster, two `auth-server serve` instances
on different loopback ports sharing it, and nginx in front of them as a round-robin upstream
that names the instance of every response in `X-Upstream`."""

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The browser fixtures (headless Chromium with a virtual authenticator) are shared with
# Tests/Browser; its conftest is loaded under another name to reuse them here.
_spec = importlib.util.spec_from_file_location("browser_conftest", ROOT / "Tests" / "Browser" / "conftest.py")
_browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_browser)
driver = _browser.driver
artifacts = _browser.artifacts
binary = _browser.binary
free_port = _browser.free_port
from auth_server import wait_ready  # noqa: E402  (on the path once the browser conftest is loaded)
from browser_flows import RelyingParty  # noqa: E402

KEY_ENCRYPTION_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
THROTTLE_FAILURES = 4


def as_postgres(command):
    """PostgreSQL refuses to run as root: run its tools as the postgres user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + command
    return command


class Cluster:
    def __init__(self, work):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            pytest.fail("PostgreSQL server binaries not found: install the postgresql package")
        self.bin = Path(bins[-1])
        self.data = work / "pg"
        self.port = free_port()
        self.log = work / "pg.log"
        self.data.mkdir()
        self.log.touch()
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres")
            shutil.chown(self.log, "postgres")
        subprocess.run(as_postgres([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                                    "--no-sync", "-E", "UTF8"]), check=True, capture_output=True, cwd="/")
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='' "
                   "-c fsync=off -c synchronous_commit=off")
        subprocess.run(as_postgres([str(self.bin / "pg_ctl"), "-w", "-D", str(self.data), "-l", str(self.log),
                                    "-o", options, "start"]), check=True, capture_output=True, cwd="/")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self):
        subprocess.run(as_postgres([str(self.bin / "pg_ctl"), "-w", "-D", str(self.data), "-m", "fast", "stop"]),
                       capture_output=True)


class Instance:
    def __init__(self, name, work, config, environment):
        self.name = name
        self.port = config["listen"].split(":")[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.config_path = work / f"{name}.json"
        self.config_path.write_text(json.dumps(config))
        self.log_path = work / f"{name}.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary(), "serve", "--config", str(self.config_path)], cwd=ROOT,
                                        stdout=self.log, stderr=self.log, env=environment)
        wait_ready(f"{self.base}/readyz", self.process, self.log_path)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="module")
def rp():
    relying_party = RelyingParty()
    yield relying_party
    relying_party.server.shutdown()


NGINX_CONFIG = """
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {work}/nginx-access.log;
    client_body_temp_path {work}/client_body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream auth {{
        server 127.0.0.1:{a};
        server 127.0.0.1:{b};
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://auth;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_next_upstream off;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


@pytest.fixture(scope="module")
def scale_out(rp):
    """Yields a dict: base (nginx), instances (name → Instance), cluster, environment, config_path."""
    if not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        pytest.fail("nginx is not installed (scripts/test installs the Debian package)")
    work = Path(tempfile.mkdtemp(prefix="auth-scale-out-"))
    os.chmod(work, 0o755)
    cluster = None
    nginx_port = free_port()
    base = f"http://localhost:{nginx_port}"
    environment = dict(os.environ, AUTH_SERVER_KEY_ENCRYPTION_KEY=KEY_ENCRYPTION_KEY)
    ports = [free_port(), free_port()]
    instances = {}
    nginx = None
    try:
        cluster = Cluster(work)
        for name, port in zip(("a", "b"), ports):
            config = {
                "issuer": base, "listen": f"127.0.0.1:{port}", "database_url": cluster.url,
                "public_dir": str(ROOT / "public"), "webauthn": {"rp_name": "Example ID"},
                "sign_in_throttle": {"account_max_failures": THROTTLE_FAILURES, "address_max_failures": 1000},
                "clients": [{
                    "client_id": "scale-app", "client_name": "Scale App", "application_type": "native",
                    "redirect_uris": [f"{rp.base}/callback"], "post_logout_redirect_uris": [f"{rp.base}/signed-out"],
                    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                    "scope": "openid profile email", "first_party": True,
                }],
            }
            instances[name] = Instance(name, work, config, environment)
        for directory in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (work / directory).mkdir()
            os.chmod(work / directory, 0o777)
        conf = work / "nginx.conf"
        conf.write_text(NGINX_CONFIG.format(work=work, a=ports[0], b=ports[1], port=nginx_port))
        nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
        nginx = subprocess.Popen([nginx_bin, "-p", str(work), "-c", str(conf), "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=open(work / "nginx-stderr.log", "w"))
        wait_ready(f"{base}/readyz", nginx, work / "nginx-stderr.log")
        yield {"base": base, "instances": instances, "cluster": cluster, "environment": environment,
               "config_path": instances["a"].config_path, "work": work}
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(timeout=30)
        for instance in instances.values():
            instance.stop()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
