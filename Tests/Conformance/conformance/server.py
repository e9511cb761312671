"""Starting `auth-server serve` over https for the harness (issuer `https://localhost:<port>`,
its embedded PostgreSQL in a throwaway data_dir), and hashing the static clients' secrets
with `auth-server clients hash-secret`."""

import contextlib
import json
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pysupport"))
from auth_server import ROOT, binary, free_port  # noqa: E402


def hash_secret(secret):
    result = subprocess.run([binary(), "clients", "hash-secret"], input=secret + "\n", capture_output=True,
                            text=True, check=True)
    return dict(line.split(": ", 1) for line in result.stdout.strip().splitlines())["client_secret_hash"]


def wait_ready(url, process, log_path, context, seconds=90):
    deadline = time.time() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"{url} did not become ready:\n" + Path(log_path).read_text()[-4000:])
        time.sleep(0.3)


@contextlib.contextmanager
def serve(config, folder, ca_file):
    """Writes `config` to `folder`, runs `auth-server serve` on it until /readyz answers over
    https (verified against `ca_file`), yields the log's path and stops it afterwards."""
    folder = Path(folder)
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=2))
    log_path = folder / "server.log"
    context = ssl.create_default_context(cafile=str(ca_file))
    with open(log_path, "w") as log:
        process = subprocess.Popen([binary(), "serve", "--config", str(path)], cwd=ROOT, stdout=log,
                                   stderr=log)
        try:
            wait_ready(f"{config['issuer']}/readyz", process, log_path, context)
            yield log_path
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
