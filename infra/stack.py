"""A team's textsift services on one host, started and stopped by one command: ``python infra/stack.py up|down|env``.

``up`` brings up, in ``--state`` (default ``.textsift/infra``):

* PostgreSQL (Debian's ``postgresql`` package; run as its ``postgres`` user when started by root, which
  PostgreSQL refuses to run as, its cluster then in that user's home), on 127.0.0.1 only, with databases
  ``mlflow`` and ``prefect``, kept from one ``up`` to the next (``down --purge`` deletes them);
* an MLflow tracking server on it, artifacts in a local folder (``--artifacts-destination``: clients upload and
  download through the server, so no client needs the folder);
* a Prefect server on it, a ``process`` work pool ``textsift`` and a worker polling it from the project folder;
* a Dask scheduler and ``--workers`` single-threaded workers, plus ``--gpu-workers`` advertising ``GPU=1``
  (the flow's ``--gpu-resource GPU`` routes GPU stages to those), all with the project on their path.

Every port is free-chosen on 127.0.0.1 and written with the process ids to ``<state>/stack.json``; ``env`` prints
the variables a run needs (``PREFECT_API_URL``, ``MLFLOW_TRACKING_URI``, ``TEXTSIFT_DASK_ADDRESS``) and ``down``
stops every process and PostgreSQL. Logs are in ``<state>/logs``. Nothing listens beyond 127.0.0.1: put a proxy with
authentication in front before other hosts use it (neither server checks who calls).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # this environment's mlflow, prefect and dask
POOL = "textsift"
DATABASES = ("mlflow", "prefect")
PG_USER = "textsift"


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


def start_postgres(state: Path) -> dict[str, Any]:
    """The cluster of ``state`` (made on the first ``up``, kept by ``down`` unless purged) on a free port, trust
    authentication from 127.0.0.1 only, with the databases the servers use."""
    pg, home, port = postgres_bin(), postgres_home(state), free_port()
    data, sockets = home / "data", home / "socket"
    fresh = not (data / "PG_VERSION").exists()
    home.mkdir(parents=True, exist_ok=True)
    sockets.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        for folder in (home, sockets):
            os.chown(folder, user.pw_uid, user.pw_gid)
    if fresh:
        subprocess.run(as_server_user([str(pg / "initdb"), "-D", str(data), "-U", PG_USER, "-A", "trust",
                                       "--no-instructions"]), check=True, capture_output=True)
    subprocess.run(as_server_user([str(pg / "pg_ctl"), "-D", str(data), "-l", str(home / "postgres.log"), "-w",
                                   "start", "-o", f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1"]),
                   check=True, capture_output=True)
    for name in DATABASES if fresh else ():
        subprocess.run([str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", PG_USER, name], check=True,
                       capture_output=True)
    return {"port": port, "home": str(home), "bin": str(pg)}


def spawn(command: list[str], log: Path, env: dict[str, str], cwd: Path = REPO) -> int:
    """Start ``command`` in its own process group, output to ``log``; its pid."""
    with log.open("ab") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    return process.pid


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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "true", "MLFLOW_DISABLE_TELEMETRY": "true"}
    record: dict[str, Any] = {"state": str(state), "pids": {}}
    try:
        record["postgres"] = start_postgres(state)
        database = f"{PG_USER}@127.0.0.1:{record['postgres']['port']}"
        mlflow_port, prefect_port = free_port(), free_port()
        artifacts = state / "mlartifacts"
        artifacts.mkdir(exist_ok=True)
        record["pids"]["mlflow"] = spawn(
            [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(mlflow_port),
             "--backend-store-uri", f"postgresql+psycopg2://{database}/mlflow", "--artifacts-destination",
             str(artifacts), "--workers", "1"], logs / "mlflow.log", env)
        prefect_env = {**env, "PREFECT_HOME": str(state / "prefect"),
                       "PREFECT_API_DATABASE_CONNECTION_URL": f"postgresql+asyncpg://{database}/prefect"}
        record["pids"]["prefect"] = spawn([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1",
                                           "--port", str(prefect_port)], logs / "prefect.log", prefect_env)
        record["mlflow_uri"] = f"http://127.0.0.1:{mlflow_port}"
        record["prefect_api"] = f"http://127.0.0.1:{prefect_port}/api"
        dask_port = free_port()
        record["dask_address"] = f"tcp://127.0.0.1:{dask_port}"
        record["pids"]["dask-scheduler"] = spawn(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(dask_port), "--no-dashboard"],
            logs / "dask-scheduler.log", env)
        wait_for(f"{record['mlflow_uri']}/health", "the MLflow server")
        wait_for(f"{record['prefect_api']}/health", "the Prefect server")
        client_env = {**env, "PREFECT_API_URL": record["prefect_api"], "MLFLOW_TRACKING_URI": record["mlflow_uri"],
                      "TEXTSIFT_DASK_ADDRESS": record["dask_address"]}
        for kind, count, extra in (("cpu", workers, []), ("gpu", gpu_workers, ["--resources", "GPU=1"])):
            for index in range(count):
                name = f"{kind}-{index}"
                record["pids"][f"dask-worker-{name}"] = spawn(
                    [str(BIN / "dask"), "worker", record["dask_address"], "--name", name, "--host", "127.0.0.1",
                     "--nthreads", "1", "--no-dashboard", "--no-nanny", *extra], logs / f"dask-{name}.log",
                    client_env)
        subprocess.run([str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process", "--overwrite"],
                       env=client_env, check=True, capture_output=True)
        record["pids"]["prefect-worker"] = spawn([str(BIN / "prefect"), "worker", "start", "--pool", POOL],
                                                 logs / "prefect-worker.log", client_env, cwd=project)
    except BaseException:
        (state / "stack.json").write_text(json.dumps(record), encoding="utf-8")
        down(state)
        raise
    (state / "stack.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


def down(state: Path, purge: bool = False) -> None:
    """Stop every process of the recorded stack (their process groups: a worker's children too) and PostgreSQL;
    ``purge`` also deletes the databases and artifacts (the next ``up`` starts empty)."""
    path = state / "stack.json"
    if not path.exists():
        return
    record = json.loads(path.read_text(encoding="utf-8"))
    pids = list(record.get("pids", {}).values())
    for pid in reversed(pids):  # clients before servers
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 30
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    if "postgres" in record:
        pg, home = Path(record["postgres"]["bin"]), Path(record["postgres"]["home"])
        subprocess.run(as_server_user([str(pg / "pg_ctl"), "-D", str(home / "data"), "-m", "fast", "-w", "stop"]),
                       check=False, capture_output=True)
        if purge:
            shutil.rmtree(home, ignore_errors=True)
    path.unlink()
    if purge:
        shutil.rmtree(state / "mlartifacts", ignore_errors=True)
        shutil.rmtree(state / "prefect", ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
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
