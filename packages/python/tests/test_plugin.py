"""The svc-emulator wheel, installed: its `svc` binary, its module and its pytest plugin.

Run by `cargo xtask ci` in a fresh virtual environment holding only the wheel and pytest, with
no Rust toolchain on PATH (xtask/src/dist.rs).
"""

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

import svc_emulator
from svc_emulator import Emulator, EmulatorError

PRODUCTS = "/projects/demo/prod/shop/models/products"
LAMP = {"sku": "LAMP-1", "name": "Lamp", "price": 9.5}
SEEN = {}


def test_the_wheel_brings_its_own_svc():
    path = svc_emulator.binary()
    assert os.path.isfile(path), path
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("svc "), out.stdout


def test_the_fixture_is_the_demo_with_its_urls_and_key(svc_emulator):
    assert svc_emulator.project == "demo"
    assert svc_emulator.app_base_url == svc_emulator.api_base_url + "/api"
    assert svc_emulator.api_key
    assert "shop" in svc_emulator.resource_tokens
    env = svc_emulator.env()
    assert env["SVC_API_KEY"] == svc_emulator.api_key
    assert env["SVC_TOOLS_TOKEN"] == svc_emulator.resource_tokens["__svc_app__"]
    assert "api_key" not in repr(svc_emulator) and svc_emulator.api_key not in repr(svc_emulator)


def test_a_create_is_in_the_journal(svc_emulator, svc_journal):
    status, page = svc_emulator.request("GET", PRODUCTS)
    assert status == 200
    SEEN["count"] = page["count"]
    status, created = svc_emulator.request("POST", PRODUCTS, LAMP)
    assert status == 201, created
    assert [r["method"] for r in svc_journal(model="products")] == ["GET", "POST"]
    svc_emulator.assert_received(method="POST", model="products", exactly=1)
    missed = svc_emulator.expect(method="DELETE", model="products")
    assert not missed["met"]
    with pytest.raises(AssertionError):
        svc_emulator.assert_received(method="DELETE", model="products")


def test_each_test_starts_from_the_state_at_start(svc_emulator, svc_journal):
    # The lamp of the test before is gone, and so are its requests.
    assert svc_journal() == []
    status, page = svc_emulator.request("GET", PRODUCTS)
    assert status == 200
    assert page["count"] == SEEN["count"]


def test_an_emulator_of_its_own_removes_its_start_line_file_when_stopped(tmp_path):
    config = tmp_path / "emulator.json"
    config.write_text(
        '{"projects": [{"name": "p", "api_keys": ["key_p"], "resources": [{"name": "notes", '
        '"token": "tok", "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"}]}]}'
    )
    with Emulator.start(config=str(config)) as emulator:
        assert emulator.project == "p"
        path = emulator.startup_file
        assert path and os.path.isfile(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        status, created = emulator.request(
            "POST", "/projects/p/prod/notes/models/notes", {"body": "hi"}, auth="tok"
        )
        assert status == 201, created
    assert not os.path.exists(path)
    assert emulator.startup_file is None
    emulator.stop()  # twice is nothing


def test_a_config_that_does_not_load_is_an_error_that_says_why(tmp_path):
    config = tmp_path / "bad.json"
    config.write_text("{")
    with pytest.raises(EmulatorError) as error:
        Emulator.start(config=str(config))
    assert "bad.json" in str(error.value)


@pytest.mark.skipif(not os.environ.get("SVC_DIST_CHECK"), reason="only in `cargo xtask dist --check`")
def test_no_rust_toolchain_is_needed():
    import shutil

    assert shutil.which("cargo") is None and shutil.which("rustc") is None


def test_ctrl_c_stops_the_emulator_and_removes_its_start_line_file(tmp_path):
    script = tmp_path / "suite.py"
    script.write_text(
        "import time\n"
        "from svc_emulator import Emulator\n"
        "emulator = Emulator.start()\n"
        "print(emulator.startup_file, emulator._process.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    suite = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    startup_file, pid = suite.stdout.readline().split()
    assert os.path.isfile(startup_file)
    suite.send_signal(signal.SIGINT)
    suite.wait(timeout=30)
    assert not os.path.exists(startup_file)
    assert _ended(int(pid)), f"the emulator {pid} still runs"


# A suite whose one test holds the plugin's emulator until the suite is signalled: it prints the
# emulator's start-line file and process id. ``conftest`` is the suite's conftest.py, if any.
INNER_TEST = """
import os
import time

def test_holds_the_emulator(svc_emulator_session):
    emulator = svc_emulator_session
    os.environ["INNER_STARTUP_FILE"] = emulator.startup_file
    print("SVC-EMULATOR", emulator.startup_file, emulator._process.pid, flush=True)
    time.sleep(300)
"""


def _inner_pytest(tmp_path, conftest=None):
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    if conftest is not None:
        (tmp_path / "conftest.py").write_text(conftest)
    env = {k: v for k, v in os.environ.items() if k != "SVC_EMULATOR_STARTUP"}
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    seen = []
    for line in suite.stdout:
        if line.startswith("SVC-EMULATOR "):
            _, startup_file, pid = line.split()
            assert os.path.isfile(startup_file)
            return suite, startup_file, int(pid)
        seen.append(line)
    suite.wait()
    raise AssertionError("the inner suite did not start its emulator: " + "".join(seen))


def _ended(pid, seconds=60.0):
    """Whether process ``pid`` ends within a generous deadline (a bounded wait for the process
    table, not a timing): gone, or a zombie, which ran its end, waiting to be reaped."""
    return _within(lambda: _gone(pid), seconds)


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _within(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_sigterm_to_pytest_stops_the_plugins_emulator_and_removes_its_start_line_file(tmp_path):
    suite, startup_file, pid = _inner_pytest(tmp_path)
    suite.send_signal(signal.SIGTERM)
    # SIGTERM's own end, after the plugin's clean-up: no file left the moment pytest is gone.
    assert suite.wait(timeout=60) == -signal.SIGTERM
    assert not os.path.exists(startup_file)
    assert _ended(pid), f"the emulator {pid} still runs"


def test_sigterm_to_pytest_keeps_a_handler_installed_before_the_plugins(tmp_path):
    # The suite's own handler runs after the plugin's clean-up: it sees the file gone.
    conftest = (
        "import os, signal\n"
        "def _on_term(signum, frame):\n"
        "    gone = not os.path.exists(os.environ['INNER_STARTUP_FILE'])\n"
        "    with open('handled', 'w') as file:\n"
        "        file.write('file gone' if gone else 'file there')\n"
        "    os._exit(7)\n"
        "signal.signal(signal.SIGTERM, _on_term)\n"
    )
    suite, startup_file, pid = _inner_pytest(tmp_path, conftest)
    suite.send_signal(signal.SIGTERM)
    assert suite.wait(timeout=60) == 7
    assert (tmp_path / "handled").read_text() == "file gone"
    assert not os.path.exists(startup_file)
    assert _ended(pid), f"the emulator {pid} still runs"


def test_sigkill_of_pytest_ends_the_plugins_emulator_and_its_start_line_file(tmp_path):
    suite, startup_file, pid = _inner_pytest(tmp_path)
    suite.kill()
    suite.wait()
    # Nothing of pytest runs after SIGKILL: the emulator sees its stdin end and stops itself.
    assert _ended(pid), f"the emulator {pid} outlived pytest"
    assert _within(lambda: not os.path.exists(startup_file)), startup_file


def test_the_emulator_ends_with_its_starter_not_with_the_starters_children(tmp_path):
    # Neither a forked child nor a program it ran holds the emulator's stdin: once the process
    # that started the emulator is gone, the emulator stops though they live on.
    script = tmp_path / "suite.py"
    script.write_text(
        "import os, subprocess, sys, time\n"
        "from svc_emulator import Emulator\n"
        "emulator = Emulator.start()\n"
        "forked = os.fork()\n"
        "if forked == 0:\n"
        "    time.sleep(300)\n"
        "    os._exit(0)\n"
        "ran = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print(emulator.startup_file, emulator._process.pid, forked, ran.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    suite = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    startup_file, pid, forked, ran = suite.stdout.readline().split()
    try:
        suite.kill()
        suite.wait()
        assert _ended(int(pid)), f"the emulator {pid} outlived its starter"
        assert _within(lambda: not os.path.exists(startup_file)), startup_file
        assert not _gone(int(forked)) and not _gone(int(ran))
    finally:
        for child in (forked, ran):
            try:
                os.kill(int(child), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_svc_emulator_variables_of_this_process_are_not_the_emulators(tmp_path, monkeypatch):
    missing = str(tmp_path / "no-such-config.json")
    monkeypatch.setenv("SVC_EMULATOR_CONFIG", missing)
    monkeypatch.setenv("SVC_EMULATOR_JOURNAL_CAPACITY", "0")
    with Emulator.start() as emulator:
        assert emulator.project == "demo"
        emulator.request("GET", PRODUCTS)
        assert len(emulator.requests()) == 1
    # An explicit environment is the emulator's, as given.
    with pytest.raises(EmulatorError) as error:
        Emulator.start(env=dict(os.environ))
    assert missing in str(error.value)


def test_the_plugin_shows_the_emulators_warnings(tmp_path):
    (tmp_path / "test_inner.py").write_text(
        "def test_uses_it(svc_emulator):\n    assert svc_emulator.project == 'demo'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SVC_EMULATOR_STARTUP"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--svc-emulator-args", "--listen 0.0.0.0:0", "test_inner.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "which is not loopback" in out.stdout, out.stdout


def test_a_relative_ini_config_is_the_ini_files_neighbour(tmp_path):
    project = '{"projects": [{"name": "%s", "api_keys": ["key_%s"], "resources": []}]}'
    (tmp_path / "pytest.ini").write_text("[pytest]\nsvc_emulator_config = emu.json\n")
    (tmp_path / "emu.json").write_text(project % ("beside", "beside"))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "emu.json").write_text(project % ("cwd", "cwd"))
    (sub / "test_inner.py").write_text(
        "def test_project(svc_emulator):\n    assert svc_emulator.project == 'beside'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SVC_EMULATOR_STARTUP"}
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"]
    out = subprocess.run(run, cwd=sub, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # One that does not load is an error naming the path tried.
    (tmp_path / "emu.json").unlink()
    out = subprocess.run(run, cwd=sub, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert str(tmp_path / "emu.json") in out.stdout + out.stderr, out.stdout + out.stderr


def test_stop_leaves_alone_a_file_that_replaced_the_start_line_file(tmp_path):
    replacements = [lambda path: open(path, "w").write("someone else's"), os.mkdir]
    for replace in replacements:
        emulator = Emulator.start()
        path = emulator.startup_file
        pid = emulator._process.pid
        try:
            # The emulator ends (and removes its file), then someone else's file takes the path.
            os.kill(pid, signal.SIGTERM)
            emulator._process.wait(timeout=60)
            assert not os.path.exists(path)
            # The file's inode number, free again, is the next file's: not the replacement's.
            open(path + ".spacer", "w").close()
            replace(path)
            emulator.stop()
            assert os.path.exists(path), "the other file was removed"
        finally:
            for leftover in (path, path + ".spacer"):
                if os.path.isdir(leftover):
                    os.rmdir(leftover)
                elif os.path.exists(leftover):
                    os.remove(leftover)


def test_a_start_removes_the_start_line_files_of_starters_no_longer_running():
    import secrets
    import tempfile

    reaped = subprocess.Popen([sys.executable, "-c", ""])
    reaped.wait()
    dead = reaped.pid

    def name(pid):
        return os.path.join(tempfile.gettempdir(), f"svc-emulator-{pid}-{secrets.token_hex(12)}.json")

    stale, live, other = name(dead), name(os.getpid()), name(dead) + ".kept"
    for path in (stale, live, other):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    try:
        with Emulator.start() as emulator:
            assert os.path.basename(emulator.startup_file).startswith(f"svc-emulator-{os.getpid()}-")
        assert not os.path.exists(stale), stale
        assert os.path.exists(live) and os.path.exists(other)
    finally:
        for path in (stale, live, other):
            if os.path.exists(path):
                os.remove(path)


def test_the_binary_is_never_an_svc_in_the_cwd_or_on_path(tmp_path, monkeypatch):
    planted = tmp_path / "planted"
    planted.mkdir()
    mark = tmp_path / "the planted svc ran"
    svc = planted / "svc"
    svc.write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 3\n")
    svc.chmod(0o755)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.delenv("SVC_BIN", raising=False)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.pathsep}/usr/bin")
    monkeypatch.chdir(planted)
    monkeypatch.setattr(svc_emulator.sysconfig, "get_path", lambda *a, **k: str(empty))
    with pytest.raises(EmulatorError) as error:
        Emulator.start()
    assert "SVC_BIN" in str(error.value)
    assert not mark.exists()
    # The user scheme's scripts folder is looked in too.
    user = tmp_path / "user"
    user.mkdir()
    (user / "svc").write_text("#!/bin/sh\nexit 0\n")
    (user / "svc").chmod(0o755)
    monkeypatch.setattr(
        svc_emulator.sysconfig,
        "get_path",
        lambda name, scheme=None, *a, **k: str(user if scheme and "user" in scheme else empty),
    )
    assert svc_emulator.binary() == str(user / "svc")
