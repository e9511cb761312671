"""The conformance harness's fixtures: a throwaway CA and server certificate, an https
receiver for the relying party's URIs, `auth-server serve` over https with the suite's static
clients, and a test user signed up through the real API. At the end of the run every module's
result is printed as a table and written to test-artifacts/conformance.json."""

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest
import requests

from conformance.browser import Browser, Receiver
from conformance.results import REGISTRY
from conformance.server import ROOT, free_port, hash_secret, serve
from conformance.tls import make_certificates

PASSWORD = "correct horse battery staple"
RESULTS_FILE = ROOT / "test-artifacts" / "conformance.json"


class Context:
    """What a module needs: the server's issuer, the CA, the receiver, the clients and the user."""

    def __init__(self, issuer, ca_file, receiver, backchannel, clients, email, log):
        self.issuer = issuer
        self.discovery_url = issuer + "/.well-known/openid-configuration"
        self.ca_file = ca_file
        self.receiver = receiver
        self.backchannel = backchannel
        self.clients = clients
        self.email = email
        self.password = PASSWORD
        self.log = log

    def browser(self):
        """A fresh user agent (no cookies), as the suite asks the tester to use."""
        return Browser(self.issuer, self.ca_file, self.receiver, self.email, self.password)

    def http(self):
        session = requests.Session()
        session.verify = str(self.ca_file)
        session.trust_env = False  # the CA of this run only, never REQUESTS_CA_BUNDLE
        return session


@pytest.fixture(scope="session")
def context():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-conformance-"))
    os.chmod(folder, 0o755)  # the embedded cluster may run as the postgres user
    try:
        tls = make_certificates(folder)
        receiver = Receiver(tls["cert"], tls["key"])
        # Back-channel logout deliveries come from the server's URLSession (libcurl on Linux),
        # which trusts only the system CA store, not this run's CA; the server accepts http
        # for a loopback backchannel_logout_uri, so that receiver is plain http on 127.0.0.1.
        backchannel = Receiver()
        port = free_port()
        issuer = f"https://localhost:{port}"
        rp = receiver.base
        clients = {}
        config_clients = []
        for key, method in (("client", "client_secret_basic"), ("client2", "client_secret_basic"),
                            ("client_post", "client_secret_post")):
            client_id = f"conformance-{key.replace('_', '-')}"
            secret = uuid.uuid4().hex + uuid.uuid4().hex
            clients[key] = {"client_id": client_id, "client_secret": secret, "auth": method,
                            "redirect_uri": f"{rp}/callback", "post_logout_redirect_uri": f"{rp}/post_logout_redirect"}
            config_clients.append({
                "client_id": client_id, "client_name": f"Conformance {key}", "application_type": "web",
                "redirect_uris": [f"{rp}/callback"], "post_logout_redirect_uris": [f"{rp}/post_logout_redirect"],
                "token_endpoint_auth_method": method, "client_secret_hash": hash_secret(secret),
                "grant_types": ["authorization_code", "refresh_token"],
                "scope": "openid profile email offline_access",
                "require_pkce": False,
                "backchannel_logout_uri": f"{backchannel.base}/backchannel_logout",
                "backchannel_logout_session_required": True,
            })
        config = {
            "issuer": issuer,
            "listen": f"127.0.0.1:{port}",
            "data_dir": str(folder / "var"),
            "public_dir": str(ROOT / "public"),
            "tls_cert_file": str(tls["cert"]),
            "tls_key_file": str(tls["key"]),
            "oauth": {"backchannel_retry_base_seconds": 1},
            "clients": config_clients,
        }
        with serve(config, folder, tls["ca"]) as log:
            email = f"conformance-{uuid.uuid4().hex[:8]}@example.com"
            browser = Browser(issuer, tls["ca"], receiver, email, PASSWORD)
            response = browser.post_json("/api/signup/password",
                                         {"email": email, "display_name": "Conformance User", "password": PASSWORD})
            assert response.status_code in (200, 201), response.text
            yield Context(issuer, tls["ca"], receiver, backchannel, clients, email, log)
        receiver.close()
        backchannel.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PLAN_ORDER = ["test_config_op.py", "test_basic_op.py", "test_form_post_op.py", "test_rp_initiated_logout_op.py",
              "test_backchannel_logout_op.py", "test_documentation.py"]


def pytest_collection_modifyitems(items):
    """The plans in the order the certification lists them, then the documentation check,
    which needs every module's result."""
    items.sort(key=lambda item: PLAN_ORDER.index(item.fspath.basename) if item.fspath.basename in PLAN_ORDER
               else len(PLAN_ORDER))


def pytest_terminal_summary(terminalreporter):
    runs = REGISTRY.runs
    if not runs:
        return
    REGISTRY.write(RESULTS_FILE)
    terminalreporter.section("OpenID conformance modules")
    width = max(len(run.module) for run in runs)
    plan_width = max(len(run.plan) for run in runs)
    for run in runs:
        reason = run.reason.replace("\n", " ")
        if len(reason) > 160:
            reason = reason[:157] + "..."
        terminalreporter.write_line(f"{run.module:<{width}}  {run.plan:<{plan_width}}  {run.result:<8}  {reason}")
    counts = {}
    for run in runs:
        counts[run.result] = counts.get(run.result, 0) + 1
    terminalreporter.write_line(", ".join(f"{count} {result}" for result, count in sorted(counts.items()))
                                + f"; details in {RESULTS_FILE.relative_to(ROOT)}")
