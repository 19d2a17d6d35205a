"""A team's textsift services on one host, started and stopped by one command: ``python infra/stack.py up|down|env``.

``up`` brings up, in ``--state`` (default ``.textsift/infra``):

* PostgreSQL (Debian's ``postgresql`` package; run as its ``postgres`` user when started by root, which
  PostgreSQL refuses to run as, its cluster then in that user's home), on 127.0.0.1 only, a password (SCRAM) in
  ``<state>/pgpass`` (0600, handed to the servers as ``PGPASSFILE``, never on a command line), with databases
  ``mlflow`` and ``prefect``, kept from one ``up`` to the next (``down --purge`` deletes them);
* an MLflow tracking server on it, artifacts in a local folder (``--artifacts-destination``: clients upload and
  download through the server, so no client needs the folder);
* a Prefect server on it, a ``process`` work pool ``textsift`` (one run at a time across its deployments) and a
  worker polling it from the project folder;
* a Dask scheduler and ``--workers`` single-threaded workers, plus ``--gpu-workers`` advertising ``GPU=1``
  (the flow's ``--gpu-resource GPU`` routes GPU stages to those), all with the project on their path.

Every port is free-chosen on 127.0.0.1 and written with the process ids (and start times) to ``<state>/stack.json``
as each starts, so ``down`` stops what an interrupted ``up`` left; ``env`` prints the variables a run needs
(``PREFECT_API_URL``, ``MLFLOW_TRACKING_URI``, ``TEXTSIFT_DASK_ADDRESS``) and ``down`` stops every process and
PostgreSQL. Logs are in ``<state>/logs``. Nothing listens beyond 127.0.0.1, but 127.0.0.1 is no boundary against
other local users: the MLflow and Prefect servers and the Dask scheduler check no caller (a Dask client runs code on
the workers), so on a shared host run the stack under its own account or in a container, and put an authenticating
proxy in front before other hosts use it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # this environment's mlflow, prefect and dask
POOL = "textsift"
DATABASES = ("mlflow", "prefect")
PG_USER = "textsift"
# MLflow's job execution (GenAI scorers and periodic jobs, none of which textsift uses) starts seven huey consumer
# processes beside the server, each importing MLflow: 4x the CPU of a server start and 2.3x its time to answer.
NO_MLFLOW_JOBS = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def free_port() -> int:
    """A port nothing listens on now (127.0.0.1)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres_bin() -> Path:
    """The folder of PostgreSQL's server programs (Debian keeps them off PATH, in /usr/lib/postgresql/<v>/bin)."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    if not versions:
        raise SystemExit("PostgreSQL is not installed: `apt-get install postgresql` (Debian's package)")
    return versions[-1].parent


def as_server_user(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` user when this is root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def postgres_home(state: Path) -> Path:
    """Where the cluster of ``state`` lives: ``state/postgres``, or, as root, a folder in the ``postgres`` user's
    home named after ``state`` (the server's user must reach its files, and a root-owned project seldom lets it)."""
    if os.geteuid() != 0:
        return state / "postgres"
    digest = hashlib.sha256(str(state).encode()).hexdigest()[:12]
    return Path(pwd.getpwnam("postgres").pw_dir) / f"textsift-{digest}"


def password_file(state: Path) -> Path:
    """The ``PGPASSFILE`` (mode 0600) holding the database role's password, made once per stack: the servers and
    ``createdb`` read it, so the password is on no command line (``ps`` shows those to every local user)."""
    path = state / "pgpass"
    if not path.exists():
        path.write_text(f"127.0.0.1:*:*:{PG_USER}:{secrets.token_hex(24)}\n", encoding="utf-8")
        path.chmod(0o600)
    return path


def start_postgres(state: Path, record: dict[str, Any]) -> None:
    """The cluster of ``state`` (made on the first ``up``, kept by ``down`` unless purged) on a free port of
    127.0.0.1, password (SCRAM) authentication over TCP and the OS user over the socket, recorded in ``record``
    as soon as it runs; then the databases the servers use, those missing."""
    pg, home, port = postgres_bin(), postgres_home(state), free_port()
    data, sockets = home / "data", home / "socket"
    home.mkdir(parents=True, exist_ok=True)
    sockets.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        for folder in (home, sockets):
            os.chown(folder, user.pw_uid, user.pw_gid)
    passfile = password_file(state)
    if not (data / "PG_VERSION").exists():
        handed = home / "initial-password"  # the server's user reads it once; removed at once
        handed.write_text(passfile.read_text(encoding="utf-8").rsplit(":", 1)[1], encoding="utf-8")
        handed.chmod(0o600)
        if os.geteuid() == 0:
            os.chown(handed, user.pw_uid, user.pw_gid)
        try:
            subprocess.run(as_server_user([str(pg / "initdb"), "-D", str(data), "-U", PG_USER, "--auth-local=peer",
                                           "--auth-host=scram-sha-256", f"--pwfile={handed}", "--no-instructions"]),
                           check=True, capture_output=True)
        finally:
            handed.unlink()
    subprocess.run(as_server_user([str(pg / "pg_ctl"), "-D", str(data), "-l", str(home / "postgres.log"), "-w",
                                   "start", "-o", f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1"]),
                   check=True, capture_output=True)
    record["postgres"] = {"port": port, "home": str(home), "bin": str(pg)}
    save(state, record)
    env = {**os.environ, "PGPASSFILE": str(passfile)}
    for name in DATABASES:
        made = subprocess.run([str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", PG_USER, name],
                              env=env, capture_output=True, text=True, check=False)
        if made.returncode != 0 and "already exists" not in made.stderr:
            raise SystemExit(f"createdb {name} failed: {made.stderr.strip()[-500:]}")


def save(state: Path, record: dict[str, Any]) -> None:
    """Write the stack record now (after each start), so ``down`` reaches whatever an interrupted ``up`` left."""
    path = state / "stack.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=1), encoding="utf-8")
    os.replace(temporary, path)


def spawn(command: list[str], log: Path, env: dict[str, str], cwd: Path = REPO) -> list[float]:
    """Start ``command`` in its own process group, output to ``log``; its pid and start time (``down`` kills a
    recorded pid only while it is that process: after a reboot the number may be another's)."""
    with log.open("ab") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    return [process.pid, psutil.Process(process.pid).create_time()]


def wait_for(url: str, what: str, seconds: float = 120) -> None:
    """Until ``url`` answers 200, or exit naming ``what``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:  # noqa: S310 - a local health URL
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{what} did not start within {seconds:.0f} s: see its log")


def up(state: Path, workers: int, gpu_workers: int, project: Path) -> dict[str, Any]:
    """Start every service (see the module docstring); the stack record written to ``state/stack.json``."""
    if (state / "stack.json").exists():
        raise SystemExit(f"a stack is recorded in {state}: `python infra/stack.py down --state {state}` first")
    logs = state / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    fresh = not (postgres_home(state) / "data" / "PG_VERSION").exists()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "true", "MLFLOW_DISABLE_TELEMETRY": "true"}
    record: dict[str, Any] = {"state": str(state), "pids": {}}

    def started(name: str, command: list[str], log: Path, environment: dict[str, str], cwd: Path = REPO) -> None:
        record["pids"][name] = spawn(command, log, environment, cwd)
        save(state, record)

    try:
        start_postgres(state, record)
        database = f"{PG_USER}@127.0.0.1:{record['postgres']['port']}"
        env["PGPASSFILE"] = str(password_file(state))  # the servers' drivers (libpq, asyncpg) read it
        mlflow_port, prefect_port = free_port(), free_port()
        artifacts = state / "mlartifacts"
        artifacts.mkdir(exist_ok=True)
        started("mlflow", [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(mlflow_port),
                           "--backend-store-uri", f"postgresql+psycopg2://{database}/mlflow",
                           "--artifacts-destination", str(artifacts), "--workers", "1"], logs / "mlflow.log",
                {**env, **NO_MLFLOW_JOBS})
        prefect_env = {**env, "PREFECT_HOME": str(state / "prefect"),
                       "PREFECT_API_DATABASE_CONNECTION_URL": f"postgresql+asyncpg://{database}/prefect"}
        started("prefect", [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port",
                            str(prefect_port)], logs / "prefect.log", prefect_env)
        record["mlflow_uri"] = f"http://127.0.0.1:{mlflow_port}"
        record["prefect_api"] = f"http://127.0.0.1:{prefect_port}/api"
        dask_port = free_port()
        record["dask_address"] = f"tcp://127.0.0.1:{dask_port}"
        started("dask-scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(dask_port),
                                   "--no-dashboard"], logs / "dask-scheduler.log", env)
        wait_for(f"{record['mlflow_uri']}/health", "the MLflow server")
        wait_for(f"{record['prefect_api']}/health", "the Prefect server")
        client_env = {**env, "PREFECT_API_URL": record["prefect_api"], "MLFLOW_TRACKING_URI": record["mlflow_uri"],
                      "TEXTSIFT_DASK_ADDRESS": record["dask_address"]}
        for kind, count, extra in (("cpu", workers, []), ("gpu", gpu_workers, ["--resources", "GPU=1"])):
            for index in range(count):
                name = f"{kind}-{index}"
                started(f"dask-worker-{name}", [str(BIN / "dask"), "worker", record["dask_address"], "--name", name,
                                                "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
                                                "--no-nanny", *extra], logs / f"dask-{name}.log", client_env)
        subprocess.run([str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process", "--overwrite"],
                       env=client_env, check=True, capture_output=True)
        # one project, one run at a time, whichever deployment (nightly or Dask): the pool holds the others
        # Scheduled until the slot frees, where a second run would fail on the project lock
        subprocess.run([str(BIN / "prefect"), "work-pool", "set-concurrency-limit", POOL, "1"], env=client_env,
                       check=True, capture_output=True)
        started("prefect-worker", [str(BIN / "prefect"), "worker", "start", "--pool", POOL],
                logs / "prefect-worker.log", client_env, cwd=project)
    except BaseException:
        save(state, record)
        down(state, purge=fresh)  # an interrupted first up leaves no cluster behind
        raise
    save(state, record)
    return record


def down(state: Path, purge: bool = False) -> None:
    """Stop every process of the recorded stack (their process groups: a worker's children too) and PostgreSQL;
    ``purge`` also deletes the databases and artifacts (the next ``up`` starts empty)."""
    path = state / "stack.json"
    if not path.exists():
        return
    record = json.loads(path.read_text(encoding="utf-8"))
    pids = [int(pid) for pid, started in record.get("pids", {}).values() if _same_process(int(pid), started)]
    for pid in reversed(pids):  # clients before servers
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    if "postgres" in record:
        pg, home = Path(record["postgres"]["bin"]), Path(record["postgres"]["home"])
        subprocess.run(as_server_user([str(pg / "pg_ctl"), "-D", str(home / "data"), "-m", "fast", "-w", "stop"]),
                       check=False, capture_output=True)
        if purge:
            shutil.rmtree(home, ignore_errors=True)
    path.unlink()
    if purge:
        for made in ("mlartifacts", "prefect", "pgpass"):
            target = state / made
            shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)


def _same_process(pid: int, started: float) -> bool:
    """Whether ``pid`` is still the process the stack started (not a later one given the same number)."""
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1e-3
    except psutil.Error:
        return False


def _signal(pid: int, sig: int) -> None:
    """``sig`` to the process group of ``pid``; nothing when it is gone or not ours to signal."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def environment(record: dict[str, Any]) -> dict[str, str]:
    """The variables that point a run (``make run``, ``python -m flows.pipeline``) at the stack."""
    return {"PREFECT_API_URL": record["prefect_api"], "MLFLOW_TRACKING_URI": record["mlflow_uri"],
            "TEXTSIFT_DASK_ADDRESS": record["dask_address"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("up", "down", "env"))
    parser.add_argument("--state", type=Path, default=REPO / ".textsift" / "infra", help="where the stack lives")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (one thread each)")
    parser.add_argument("--gpu-workers", type=int, default=0, help="Dask workers advertising GPU=1")
    parser.add_argument("--project", type=Path, default=REPO, help="folder the Prefect worker runs flows in")
    parser.add_argument("--purge", action="store_true", help="down: also delete the databases and artifacts")
    args = parser.parse_args(argv)
    state = args.state.resolve()
    if args.command == "up":
        record = up(state, args.workers, args.gpu_workers, args.project.resolve())
        print("\n".join(f"export {k}={v}" for k, v in environment(record).items()))
    elif args.command == "down":
        down(state, args.purge)
    else:
        record = json.loads((state / "stack.json").read_text(encoding="utf-8"))
        print("\n".join(f"export {k}={v}" for k, v in environment(record).items()))


if __name__ == "__main__":
    main()
