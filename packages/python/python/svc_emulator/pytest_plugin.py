"""The pytest plugin of svc-emulator, registered by the wheel (entry point ``pytest11``).

Fixtures:

- ``svc_emulator_session``: one emulator for the whole session, started from
  ``--svc-emulator-config FILE`` (or the ``svc_emulator_config`` ini option), else the demo
  project, with ``--svc-emulator-args "..."`` as more flags of ``svc emulator``; stopped, and
  its start-line file removed, when the session ends, also after Ctrl-C or SIGTERM (then
  SIGTERM goes on to the handler installed before the plugin's, else ends pytest as SIGTERM
  does); after SIGKILL of pytest the emulator stops, and removes the file, itself. Under
  ``svc emulator exec`` (``SVC_EMULATOR_STARTUP`` set) it is exec's emulator.
- ``svc_emulator``: the same emulator, put back in its state at start and its request journal
  emptied before the test: what most tests take.
- ``svc_journal``: the test's requests (a callable: ``svc_journal(method="POST")``), for tests
  that look at what the code under test sent.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import threading
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

from svc_emulator import Emulator


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options: the emulator's config file and its other flags."""
    group = parser.getgroup("svc-emulator")
    group.addoption(
        "--svc-emulator-config",
        default=None,
        help="the emulator's JSON config of projects (default: the demo project)",
    )
    group.addoption(
        "--svc-emulator-args",
        default=None,
        help='more flags of `svc emulator`, as one string ("--fixtures fixtures/")',
    )
    parser.addini(
        "svc_emulator_config",
        "the emulator's JSON config of projects (a relative path: from the ini file's folder)",
    )
    parser.addini("svc_emulator_args", "more flags of `svc emulator`, as one string")


class SvcEmulatorWarning(UserWarning):
    """A warning the session's emulator wrote on its stderr (which pytest captures)."""


def _config_file(config: pytest.Config) -> Optional[str]:
    """The emulator's config file: ``--svc-emulator-config`` (relative to the working
    directory), else the ini option, a relative path from the ini file's folder."""
    given = config.getoption("svc_emulator_config")
    if given:
        return str(given)
    ini = config.getini("svc_emulator_config")
    if not ini:
        return None
    ini = str(ini)
    if not os.path.isabs(ini) and config.inipath is not None:
        return str(config.inipath.parent / ini)
    return ini


@pytest.fixture(scope="session")
def svc_emulator_session(pytestconfig: pytest.Config) -> Iterator[Emulator]:
    """One emulator for the session (see the module's documentation)."""
    line = os.environ.get("SVC_EMULATOR_STARTUP")
    if line:
        yield Emulator.from_startup(line)
        return
    config = _config_file(pytestconfig)
    args = pytestconfig.getoption("svc_emulator_args") or pytestconfig.getini("svc_emulator_args")
    emulator = Emulator.start(config=config, args=shlex.split(args or ""))
    restore = _stop_on_sigterm(emulator)
    try:
        yield emulator
    finally:
        restore()
        emulator.stop()
        # Its warnings (on its stderr, which pytest captures) in pytest's warnings summary.
        for line in emulator._stderr:
            if "warning:" in line:
                warnings.warn(SvcEmulatorWarning(line.strip()), stacklevel=1)


def _stop_on_sigterm(emulator: Emulator) -> Callable[[], None]:
    """Stops ``emulator`` (and removes its start-line file) on SIGTERM, which then does what it
    did before: the handler installed before this one, else its default, pytest's end with
    SIGTERM's status. Returns what puts the handler before back. Nothing where Python takes no
    signal (not the main thread), nor where SIGTERM is ignored (the session then goes on) or
    handled outside Python (unknown to this plugin)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous == signal.SIG_IGN:
        return lambda: None

    def on_sigterm(signum: int, frame: Any) -> None:
        emulator.stop()
        signal.signal(signal.SIGTERM, previous)
        if callable(previous):
            previous(signum, frame)
        else:
            signal.raise_signal(signum)

    signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, previous)

    return restore


@pytest.fixture
def svc_emulator(svc_emulator_session: Emulator) -> Emulator:
    """The session's emulator, its project as at start and its journal empty."""
    svc_emulator_session.start_over()
    return svc_emulator_session


@pytest.fixture
def svc_journal(svc_emulator: Emulator) -> Callable[..., List[Dict[str, Any]]]:
    """The test's requests in the emulator's journal, filtered as the journal's route filters
    them: ``svc_journal(method="POST", model="orders")``."""
    return svc_emulator.requests


def pytest_report_header(config: pytest.Config) -> str:
    """Says where the session's emulator comes from."""
    if os.environ.get("SVC_EMULATOR_STARTUP"):
        startup = json.loads(os.environ["SVC_EMULATOR_STARTUP"])
        return f"svc-emulator: the emulator of svc emulator exec, {startup.get('api_base_url')}"
    config_file = _config_file(config)
    return f"svc-emulator: {config_file or 'the demo project'}, started by the first test that asks"
