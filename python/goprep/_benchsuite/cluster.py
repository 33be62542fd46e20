"""A real multi-node Ray cluster on loopback, for the scale-out tests and ``bench --scale``.

Every node is a separate ``ray start`` (its own raylet, object store and workers) on 127.0.0.1 with
its own temp dir under one private root, so that stopping the cluster can find exactly its own
processes (every Ray process names its session dir on its command line) and kill those by pid,
never other Ray clusters on the machine. Dashboard and usage stats are off, the object store small,
to keep it light on a 2-core CI machine.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

_PORT_FLAGS = (
    "--ray-client-server-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
    "--node-manager-port",
    "--object-manager-port",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalRayCluster:
    """``with LocalRayCluster(nodes=2, cpus_per_node=1) as c: ray.init(address=c.address)``."""

    def __init__(
        self,
        nodes: int = 2,
        cpus_per_node: int = 1,
        object_store_mb: int = 96,
        env: Optional[Dict[str, str]] = None,
        timeout: float = 180.0,
    ) -> None:
        self.nodes = nodes
        self.cpus_per_node = cpus_per_node
        self.object_store_mb = object_store_mb
        self.timeout = timeout
        self.root = tempfile.mkdtemp(prefix="gpray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
        self.env = dict(os.environ)
        # Token auth, with a token of this cluster's own: Ray enables token auth on a head node when
        # ~/.ray/auth_token exists (any earlier local ray.init writes one) but not on a node that joins,
        # which then cannot connect. Explicit settings make both independent of the home directory.
        self.client_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_USAGE_STATS_ENABLED": "0"}
        self.env.update(self.client_env)
        self.env["RAY_DISABLE_DOCKER_CPU_WARNING"] = "1"
        self.env.update(env or {})
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log: List[str] = []

    def _ray(self, *args: str) -> None:
        cmd = [sys.executable, "-m", "ray.scripts.scripts", *args]
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=self.timeout)
        self.log.append(f"$ ray {' '.join(args)}\n{p.stdout}\n{p.stderr}")
        if p.returncode != 0:
            raise RuntimeError(f"ray {args[0]} {args[1]} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")

    def start(self, attempts: int = 2) -> "LocalRayCluster":
        """Start every node; a failed start is cleaned up and retried (Ray gives a raylet a fixed 30 s
        to register, which a heavily loaded 2-core machine can miss), then raised."""
        for attempt in range(attempts):
            try:
                self._start_nodes()
                return self
            except BaseException as e:
                left = self.stop()
                if attempt + 1 == attempts or left or not isinstance(e, RuntimeError):
                    raise
                self.root = tempfile.mkdtemp(prefix="gpray", dir="/tmp")
                self.port = free_port()
                self.address = f"127.0.0.1:{self.port}"
        return self

    def _start_nodes(self) -> None:
        for i in range(self.nodes):
            temp = os.path.join(self.root, f"n{i}")
            os.makedirs(temp)
            args = [
                "start",
                "--head" if i == 0 else f"--address={self.address}",
                "--node-ip-address=127.0.0.1",
                f"--num-cpus={self.cpus_per_node}",
                "--num-gpus=0",
                f"--object-store-memory={self.object_store_mb << 20}",
                f"--temp-dir={temp}",
                "--disable-usage-stats",
            ]
            if i == 0:
                args += [f"--port={self.port}", "--include-dashboard=false"]
            args += [f"{flag}={free_port()}" for flag in _PORT_FLAGS]
            self._ray(*args)

    def pids(self) -> List[int]:
        """Every live process of this cluster (raylets, GCS, object stores, agents, workers)."""
        import psutil

        found = []
        for p in psutil.process_iter(["pid", "cmdline"]):
            try:
                if p.info["pid"] != os.getpid() and any(self.root in a for a in (p.info["cmdline"] or ())):
                    found.append(p.info["pid"])
            except (psutil.Error, TypeError):
                continue
        return found

    def stop(self, grace: float = 10.0) -> List[int]:
        """Stop every process of this cluster: SIGTERM, then SIGKILL after ``grace`` s; returns the
        pids still alive afterwards (empty when the stop was clean)."""
        import psutil

        procs = []
        for pid in self.pids():
            try:
                procs.append(psutil.Process(pid))
            except psutil.Error:
                pass
        for p in procs:
            try:
                p.send_signal(signal.SIGTERM)
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(procs, timeout=grace)
        for p in alive:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=grace)
        # workers started while we were stopping: one more pass, bounded
        deadline = time.monotonic() + grace
        left = self.pids()
        while left and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.2)
            left = self.pids()
        if not left:
            shutil.rmtree(self.root, ignore_errors=True)
        return left

    def __enter__(self) -> "LocalRayCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
