"""The svc platform's REST API emulator for Python test suites.

The wheel carries the `svc` binary; this module starts it as `svc emulator`, reads its start
line and talks to its emulator-only routes (resets, the request journal and its expectations)
with nothing but the standard library::

    from svc_emulator import Emulator

    with Emulator.start() as emulator:          # the demo project
        status, page = emulator.request("GET", "/projects/demo/prod/shop/models/products")
        emulator.reset()                          # the project as it was at start

The pytest plugin (``svc_emulator.pytest_plugin``, registered when the wheel is installed) gives
a test the ``svc_emulator`` fixture: one emulator for the session, put back in its state at
start before each test.

An emulator this module starts ends with the process that started it, however that ends: its
stdin is a pipe only that process holds (``svc emulator --exit-with-stdin``), and it removes its
start-line file itself when it stops (``--remove-on-exit``), SIGKILL of its starter included.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import secrets
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["Emulator", "EmulatorError", "binary"]


class EmulatorError(Exception):
    """The emulator could not be started, or answered a request of this module with an error."""


def binary() -> str:
    """The path of the ``svc`` binary: ``SVC_BIN`` when set, else the one this wheel installed,
    in the scripts folder of the interpreter's install scheme, or of its user scheme
    (``pip install --user``). Never one found on ``PATH`` (nor in the working directory)."""
    given = os.environ.get("SVC_BIN")
    if given:
        return given
    name = "svc.exe" if os.name == "nt" else "svc"
    for folder in _scripts_folders():
        installed = os.path.join(folder, name)
        if os.path.isfile(installed):
            return installed
    raise EmulatorError(
        "no svc binary: install the svc-emulator wheel in this environment, or set SVC_BIN to "
        "the path of an svc binary"
    )


def _scripts_folders() -> List[str]:
    """The scripts folders a wheel's binary is installed in: the default scheme's, the user
    scheme's."""
    folders = []
    user_scheme = (
        sysconfig.get_preferred_scheme("user")
        if hasattr(sysconfig, "get_preferred_scheme")
        else f"{os.name}_user"
    )
    for scheme in (None, user_scheme):
        try:
            folder = sysconfig.get_path("scripts") if scheme is None else sysconfig.get_path(
                "scripts", scheme
            )
        except KeyError:
            continue
        if folder and os.path.isabs(folder) and folder not in folders:
            folders.append(folder)
    return folders


#: The start-line files this module and the npm package make:
#: ``svc-emulator-<pid>-<random>.json`` in the temporary folder, ``<pid>`` the starter's.
_STARTUP_FILE = re.compile(r"svc-emulator-([1-9][0-9]*)-[0-9a-f]{24}\.json")


def _identity(status: os.stat_result) -> Tuple[int, int, int, int]:
    """A file's device, inode, owner and change time: an inode number freed is soon another
    file's; a change time is no one's to set."""
    return (status.st_dev, status.st_ino, status.st_uid, status.st_ctime_ns)


def _remove_own(path: str, identity: Optional[Tuple[int, int, int, int]]) -> None:
    """Removes ``path`` if it is still the file made there (``identity``); never raises."""
    try:
        now = os.lstat(path)
        if identity is not None and stat.S_ISREG(now.st_mode) and _identity(now) == identity:
            os.remove(path)
    except OSError:
        pass  # Gone already (the emulator removes it), or not ours to remove.


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    except OverflowError:
        return False
    return True


def _remove_stale() -> None:
    """Removes the start-line files (this user's own regular files, named exactly so) whose
    starter no longer runs: those of an emulator killed with its starter (SIGKILL of a process
    group), which could not remove its file. Never raises. Not on Windows."""
    if os.name == "nt" or not hasattr(os, "getuid"):
        return
    folder = tempfile.gettempdir()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = _STARTUP_FILE.fullmatch(name)
        if match is None or _running(int(match.group(1))):
            continue
        path = os.path.join(folder, name)
        try:
            status = os.lstat(path)
            if stat.S_ISREG(status.st_mode) and status.st_uid == os.getuid():
                os.remove(path)
        except OSError:
            pass


def _emulator_env() -> Dict[str, str]:
    """This process's environment without its ``SVC_EMULATOR_*`` variables: the emulator's
    flags come from ``config`` and ``args``, never from a variable set for something else."""
    return {k: v for k, v in os.environ.items() if not k.upper().startswith("SVC_EMULATOR_")}


class Emulator:
    """A running ``svc emulator``, as its start line describes it.

    Start one with :meth:`start`, or use :meth:`from_startup` for an emulator another process
    started (``svc emulator exec`` gives its command ``SVC_EMULATOR_STARTUP``). :meth:`stop`
    ends an emulator this object started; it is also stopped when the interpreter exits, and
    stops itself when the process that started it is gone (even killed). A child process, forked
    or run, never holds it: it does not keep it running, and its ``stop`` does nothing.
    """

    #: The start line, as the emulator printed it.
    startup: Dict[str, Any]
    #: The data host's base URL (records, SQL, users and teams, sessions).
    api_base_url: str
    #: The application host's base URL, ending in ``/api`` (projects, page settings).
    app_base_url: str
    #: The default project.
    project: str
    #: The default project's environment.
    environment: str
    #: The project's API key (``Authorization: Bearer ...``).
    api_key: str
    #: Every resource's static token, by resource name (``__svc_app__``: the built-in tools).
    resource_tokens: Dict[str, str]
    #: The web page's sign-in link.
    ui_url: str
    #: A file, readable by its owner only, that holds the start line while the emulator runs
    #: (for processes a test starts); ``None`` for an emulator another process started.
    startup_file: Optional[str]

    def __init__(self, startup: Mapping[str, Any]) -> None:
        """An emulator described by its start line (see :meth:`from_startup`)."""
        self.startup = dict(startup)
        self.api_base_url = str(startup["api_base_url"]).rstrip("/")
        self.app_base_url = str(startup["app_base_url"]).rstrip("/")
        self.project = str(startup["project"])
        self.environment = str(startup["environment"])
        self.api_key = str(startup["api_key"])
        self.resource_tokens = dict(startup.get("resource_tokens") or {})
        self.ui_url = str(startup.get("ui_url", ""))
        self.startup_file = None
        self._process: Optional[subprocess.Popen] = None
        self._owned_file: Optional[str] = None
        self._file_identity: Optional[Tuple[int, int, int, int]] = None
        self._drain: Optional[threading.Thread] = None
        #: What the emulator wrote on stderr (its warnings), for the pytest plugin to show.
        self._stderr: List[str] = []
        # Reentrant: a signal handler may stop the emulator while the main thread is stopping it.
        self._lock = threading.RLock()

    @classmethod
    def from_startup(cls, line: str) -> "Emulator":
        """The emulator whose start line is ``line`` (its JSON), started by someone else: it is
        not stopped by :meth:`stop`."""
        return cls(json.loads(line))

    @classmethod
    def start(
        cls,
        config: Optional[str] = None,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
    ) -> "Emulator":
        """Starts ``svc emulator`` (the demo project, or the projects of the JSON ``config``
        file) with its other flags ``args`` (``["--fixtures", "fixtures/"]``), and returns once it
        accepts connections. ``env`` replaces the process's environment; without it, the
        emulator's is this process's without its ``SVC_EMULATOR_*`` variables (the emulator's
        flags come from ``config`` and ``args``)."""
        svc = binary()
        _remove_stale()
        # The start line's file, made now (empty, readable by its owner only) so that the
        # emulator is told to remove it when it stops: it is gone even if this process is killed.
        startup_file = os.path.join(
            tempfile.gettempdir(), f"svc-emulator-{os.getpid()}-{secrets.token_hex(12)}.json"
        )
        descriptor = os.open(
            startup_file,
            os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0),
            0o600,
        )
        identity: Optional[Tuple[int, int, int, int]] = _identity(os.fstat(descriptor))
        command = [
            svc,
            "emulator",
            # Stops when its stdin, a pipe only this process holds, ends: when this process ends.
            "--exit-with-stdin",
            "--remove-on-exit",
            startup_file,
        ]
        if config is not None:
            command += ["--config", os.fspath(config)]
        command += list(args)
        process: Optional[subprocess.Popen] = None
        try:
            try:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=_emulator_env() if env is None else dict(env),
                    text=True,
                )
            except OSError as error:
                raise EmulatorError(f"cannot run {command[0]}: {error}") from error
            assert process.stdout is not None and process.stderr is not None
            line = process.stdout.readline()
            if not line:
                process.wait()
                raise EmulatorError(
                    f"svc emulator did not start (exit {process.returncode}): "
                    + process.stderr.read().strip()
                )
            emulator = cls.from_startup(line)
            with os.fdopen(descriptor, "w") as file:
                descriptor = -1
                file.write(line)
                file.flush()
                identity = _identity(os.fstat(file.fileno()))
        except BaseException:
            if descriptor >= 0:
                os.close(descriptor)
            if process is not None:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                if process.stdin is not None:
                    process.stdin.close()
            _remove_own(startup_file, identity)
            raise
        emulator._process = process
        emulator._owned_file = emulator.startup_file = startup_file
        emulator._file_identity = identity
        # The rest of stderr (warnings, the export on exit) is read as it comes, so that a full
        # pipe never blocks the emulator.
        emulator._drain = threading.Thread(
            target=_drain, args=(process, emulator._stderr), daemon=True
        )
        emulator._drain.start()
        if hasattr(os, "register_at_fork"):
            # A forked child gets a copy of the pipe's write end: closed there, so that only this
            # process keeps the emulator running.
            os.register_at_fork(
                after_in_child=functools.partial(_forget_in_child, weakref.ref(emulator))
            )
        atexit.register(emulator.stop)
        return emulator

    def env(self) -> Dict[str, str]:
        """The variables ``svc`` and the platform's clients read, as ``svc emulator exec`` sets
        them: the base URLs, the project and its environment, the API key, the tools token and
        ``SVC_EMULATOR_STARTUP``, the start line."""
        variables = {
            "SVC_API_BASE_URL": self.api_base_url,
            "SVC_APP_BASE_URL": self.app_base_url,
            "SVC_PROJECT": self.project,
            "SVC_ENVIRONMENT": self.environment,
            "SVC_API_KEY": self.api_key,
            "SVC_EMULATOR_STARTUP": json.dumps(self.startup),
        }
        tools = self.resource_tokens.get("__svc_app__")
        if tools:
            variables["SVC_TOOLS_TOKEN"] = tools
        return variables

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        auth: Optional[str] = None,
    ) -> Tuple[int, Any]:
        """Sends one request to the data host (``path`` from its root, ``/api/...`` for the
        application host) with the API key, or the ``Authorization`` value ``auth``: its status
        and its JSON answer (``None`` when empty)."""
        request = urllib.request.Request(
            self.api_base_url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": auth or "Bearer " + self.api_key,
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as error:
            return error.code, _json(error.read())

    def _fixture(self, method: str, tail: str, project: Optional[str] = None) -> Any:
        path = "/_emulator/projects/%s/%s" % (urllib.parse.quote(project or self.project), tail)
        status, answer = self.request(method, path)
        if status >= 300:
            message = answer.get("error") if isinstance(answer, dict) else answer
            raise EmulatorError(f"{method} {path} answered {status}: {message}")
        return answer

    def reset(self, project: Optional[str] = None) -> Dict[str, Any]:
        """Puts the project back in its state at start (records, page settings, users, accounts;
        sessions end): what was put back."""
        return self._fixture("POST", "reset", project)

    def start_over(self, project: Optional[str] = None) -> None:
        """A reset, and the project's request journal emptied: what each test starts from."""
        self.reset(project)
        self._fixture("DELETE", "requests", project)

    def requests(self, **filters: Any) -> List[Dict[str, Any]]:
        """The project's requests in the journal, oldest first, filtered as the journal's route
        filters them (``method="POST"``, ``model="orders"``, ``status="4xx"``...)."""
        query = urllib.parse.urlencode({k: str(v) for k, v in filters.items()})
        answer = self._fixture("GET", "requests" + ("?" + query if query else ""))
        return list(answer["requests"])

    def expect(self, **matcher: Any) -> Dict[str, Any]:
        """Checks an expectation over the journal (the same filters, and one count:
        ``at_least``, ``at_most`` or ``exactly``): ``{"met", "expected", "matched",
        "near_misses", "report"}``."""
        query = urllib.parse.urlencode({k: str(v) for k, v in matcher.items()})
        return self._fixture("GET", "requests/expect" + ("?" + query if query else ""))

    def assert_received(self, **matcher: Any) -> None:
        """Fails with the expectation's report (its near misses) unless it is met."""
        answer = self.expect(**matcher)
        if not answer["met"]:
            raise AssertionError(answer.get("report") or answer.get("expected"))

    def stop(self) -> None:
        """Stops the emulator this object started (SIGTERM, then SIGKILL after 10 s) and removes
        its start-line file (if it is still the file made at start: one that took its place,
        someone else's, is left alone, and a removal never fails the stop); nothing for one
        another process started, or in a forked child. Safe to call twice."""
        with self._lock:
            process, self._process = self._process, None
            owned_file, self._owned_file = self._owned_file, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.stdin is not None:
                process.stdin.close()
            # The emulator's last words (the export on exit), for the plugin to show.
            if self._drain is not None and self._drain is not threading.current_thread():
                self._drain.join(timeout=10)
        if owned_file is not None:
            _remove_own(owned_file, self._file_identity)
            self.startup_file = None

    def _forget_after_fork(self) -> None:
        """In a forked child: closes its copy of the pipe that keeps the emulator running, and
        leaves the emulator and its file to the process that started it."""
        with self._lock:
            process, self._process = self._process, None
            self._owned_file = None
        if process is not None and process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass

    def __enter__(self) -> "Emulator":
        """The emulator, stopped at the end of the ``with`` block."""
        return self

    def __exit__(self, *exc: Any) -> None:
        """Stops the emulator (:meth:`stop`)."""
        self.stop()

    def __repr__(self) -> str:
        """Its URL and project; never the key or the tokens (a repr ends up in test reports)."""
        return f"Emulator(api_base_url={self.api_base_url!r}, project={self.project!r})"


def _json(body: bytes) -> Any:
    return json.loads(body) if body else None


def _forget_in_child(emulator: "weakref.ref[Emulator]") -> None:
    started = emulator()
    if started is not None:
        started._forget_after_fork()


def _drain(process: subprocess.Popen, lines: List[str]) -> None:
    """Passes the emulator's stderr (its warnings, its export on exit) on to ours, and keeps
    it in ``lines``."""
    assert process.stderr is not None
    for line in process.stderr:
        lines.append(line)
        try:
            sys.stderr.write(line)
        except (OSError, ValueError):
            pass
