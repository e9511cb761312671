"""Running the real `auth-server` for the Python test suites (Tests/Python, Tests/Browser,
Tests/Reliability): finding the binary, picking free loopback ports, `serve` on a config
until the test is done, and SQL on its embedded PostgreSQL (`psql`, `held_lock`)."""

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary():
    explicit = os.environ.get("AUTH_SERVER_BIN")
    if explicit:
        return explicit
    for configuration in ("debug", "release"):
        candidate = ROOT / ".build" / configuration / "auth-server"
        if candidate.exists():
            return str(candidate)
    pytest.fail("auth-server is not built: run `swift build` first")


def wait_ready(url, process, log_path, seconds=90):
    """Polls `url` until it answers 200; fails the test with the log's tail when `process`
    exits first or `seconds` pass."""
    deadline = time.time() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if (process is not None and process.poll() is not None) or time.time() > deadline:
            pytest.fail(f"{url} did not become ready:\n" + Path(log_path).read_text()[-4000:])
        time.sleep(0.3)


@contextlib.contextmanager
def serve(config, folder, env=None, config_name="config.json"):
    """Writes `config` (a dict) to `folder`, runs `auth-server serve` on it with its output in
    `folder/server.log` until /readyz answers, yields the log's path, and stops it (SIGTERM)
    afterwards. The issuer in `config` must be the server's own base URL."""
    folder = Path(folder)
    path = folder / config_name
    path.write_text(json.dumps(config))
    log_path = folder / "server.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([binary(), "serve", "--config", str(path)], cwd=ROOT, env=env, stdout=log,
                                   stderr=log)
        try:
            wait_ready(f"{config['issuer']}/readyz", process, log_path)
            yield log_path
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _psql_command(folder):
    import shutil
    pid_file = Path(folder) / "var" / "postgres" / "postmaster.pid"
    port = pid_file.read_text().splitlines()[3].strip()
    program = shutil.which("psql") or "/usr/bin/psql"
    return [program, "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "auth", "-v", "ON_ERROR_STOP=1", "-qtA"]


@contextlib.contextmanager
def held_lock(folder, sql, seconds=10):
    """Runs `sql` (a `SELECT … FOR UPDATE`) in a transaction of its own that stays open, so
    its row locks are held, until the block ends or `release()` is called: for a test that
    makes a request wait at a chosen point while something else happens."""
    env = dict(os.environ, PGAPPNAME="test-held-lock")
    process = subprocess.Popen(_psql_command(folder), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)

    class Holder:
        def release(self):
            if process.stdin.closed:
                return
            process.stdin.write("COMMIT;\n")
            process.stdin.close()
            assert process.wait(timeout=seconds) == 0, process.stderr.read()

    process.stdin.write("BEGIN;\n" + sql + ";\n")
    process.stdin.flush()
    deadline = time.time() + seconds
    state = ""
    while state != "idle in transaction" and time.time() < deadline:
        assert process.poll() is None, process.stderr.read()
        state = psql(folder, "SELECT coalesce(max(state), '') FROM pg_stat_activity "
                             "WHERE application_name = 'test-held-lock'")
        time.sleep(0.02)
    assert state == "idle in transaction", "the lock was not taken"
    holder = Holder()
    try:
        yield holder
    finally:
        holder.release()


def wait_for_lock_waiters(folder, count, seconds=10):
    """Whether `count` statements wait for a lock within `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if int(psql(folder, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) >= count:
            return True
        time.sleep(0.02)
    return False


def psql(folder, sql):
    """Runs SQL on the embedded PostgreSQL of the server whose folder (the parent of its
    data_dir `var`) is given; the cluster trusts local logins as postgres. For the set-up steps
    that have no page and for checking what is stored. Returns the rows, unaligned, stripped."""
    result = subprocess.run(_psql_command(folder) + ["-c", sql], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
