"""The svc-emulator wheel, installed: its `svc` binary, its module and its pytest plugin.

Run by `cargo xtask ci` in a fresh virtual environment holding only the wheel and pytest, with
no Rust toolchain on PATH (xtask/src/dist.rs).
"""

import os
import stat
import subprocess

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
    import signal
    import sys
    import time

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
    # The emulator ends with the suite (a bounded wait for the process table, not a timing).
    for _ in range(300):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as stat_file:
            if stat_file.read().split()[2] == "Z":
                break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the emulator {pid} still runs")
