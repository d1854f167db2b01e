"""Running tasks, each ``run(*args)`` in a worker process, yielding each outcome as it finishes: on a
local process pool that survives a worker dying (and whose workers die with the process that started
them), or on a dask.distributed cluster. A sweep runs its points this way."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from nandlab._core import ConfigError
from nandlab.terminal import shown

__all__ = ["MAX_WORKERS", "check_workers", "on_dask", "on_processes"]

MAX_WORKERS = 1024
"""Runs at once (processes or threads): more than this is a slip of the keyboard, and a dask
LocalCluster would start them all."""
SCHEDULER_TIMEOUT_SECONDS = 10
"""How long a dask scheduler has to answer (a remote one over a slow link needs a few seconds)."""


def check_workers(workers: int | None, scheduler: str | None, local_cluster: int | None) -> None:
    """ConfigError unless at most one of where to run is given, each as its kind: ``workers`` and
    ``local_cluster`` whole numbers from 1 to ``MAX_WORKERS`` (a bool is none), ``scheduler`` text."""
    for name, value in (("workers", workers), ("local_cluster", local_cluster)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WORKERS):
            found = repr(value) if not isinstance(value, int) or abs(value) < 10**20 else "a larger number"
            raise ConfigError(f"{name}: expected a whole number from 1 to {MAX_WORKERS}, found {found[:64]}")
    if scheduler is not None and not isinstance(scheduler, str):
        raise ConfigError(f"scheduler: expected an address such as \"tcp://host:8786\", found {type(scheduler).__name__}")
    given = [name for name, value in (("workers", workers), ("scheduler", scheduler),
                                      ("local_cluster", local_cluster)) if value is not None]
    if len(given) > 1:
        raise ConfigError(f"give one of workers, scheduler and local_cluster, not {' and '.join(given)}"
                          " (a cluster's workers are its own)")


def on_processes(
    run: Callable[..., dict[str, Any]], tasks: Iterator[tuple[str, tuple]], workers: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Runs ``run(*args)`` for each task on a pool of ``workers`` processes, yielding each outcome as
    it finishes. When a worker dies (killed, out of memory), the pool breaks and every run in flight
    goes again, each alone on a new pool: one that breaks its pool again is the culprit, recorded as
    failed; the others finish."""
    queue = [(run_id, args, False) for run_id, args in tasks]
    queue.reverse()
    context = multiprocessing.get_context("spawn")  # no fork of a threaded process
    parent = os.getpid()
    idle_pools = 0
    while queue:
        if idle_pools == 3:  # pools that break before settling any run: give up on what is left
            for run_id, _, _ in reversed(queue):
                yield run_id, {"error": "worker processes die before running anything", "traceback": ""}
            return
        idle_pools += 1
        with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_die_with_parent,
                                 initargs=(parent,)) as pool:
            running: dict[Future, tuple[str, tuple, bool]] = {}
            again: list[tuple[str, tuple, bool]] = []
            broken = False
            while running or (queue and not broken):
                while queue and not broken and len(running) < 2 * workers:
                    if queue[-1][2] and running:
                        break  # a run that was in flight when a pool broke runs alone
                    run_id, args, retried = queue.pop()
                    try:
                        running[pool.submit(run, *args)] = (run_id, args, retried)
                    except BrokenProcessPool:
                        queue.append((run_id, args, retried))
                        broken = True
                        break
                    if retried:
                        break
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    run_id, args, retried = running.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool as error:
                        broken = True
                        if retried:
                            idle_pools = 0
                            yield run_id, {"error": f"its worker process died, twice: {error}", "traceback": ""}
                        else:
                            again.append((run_id, args, True))
                        continue
                    idle_pools = 0
                    yield run_id, outcome
        queue.extend(reversed(again))


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCH_SECONDS = 0.5


def _die_with_parent(parent: int) -> None:
    """A worker process's initializer: the worker dies when ``parent``, the process that started
    it, does — also by SIGKILL, which leaves it no chance to stop its pool (whose workers would
    otherwise finish their runs and wait for more, forever). On Linux the kernel kills it
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, sent when the thread that started it ends: here the one
    that submits to the pool, which outlives the pool); elsewhere, or if that fails, a thread
    checks every ``_WATCH_SECONDS`` that its parent is still ``parent``."""
    if not _kill_me_with_my_parent():
        threading.Thread(target=_watch_parent, args=(parent,), name="nandlab-watch-parent", daemon=True).start()
    if os.getppid() != parent:  # it died before that was in place
        os._exit(1)


def _kill_me_with_my_parent() -> bool:
    """Linux's parent-death signal (SIGKILL) for this process; False where it cannot be had."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc, or one without prctl
        return False


def _watch_parent(parent: int) -> None:
    """Ends the process once its parent is no longer ``parent`` (it died: the process was adopted)."""
    while os.getppid() == parent:
        time.sleep(_WATCH_SECONDS)
    os._exit(1)


def on_dask(
    run: Callable[..., dict[str, Any]], tasks: Iterator[tuple[str, tuple]], scheduler: str | None,
    local_cluster: int | None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Runs ``run(*args)`` for each task as a dask.distributed task, yielding each outcome as it finishes."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - the test extra installs it
        raise ConfigError("a dask cluster needs the distributed package: pip install 'nandlab[cluster]'") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=local_cluster, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_SECONDS)
        except Exception as error:  # not an address, no scheduler answers there, or something else does
            raise ConfigError(f"scheduler {shown(scheduler)[:200]!r}: no dask scheduler answered there "
                              f"({type(error).__name__}: {shown(str(error))[:200]})") from None
    try:
        futures = {client.submit(run, *args, key=f"nandlab-{run_id}", pure=False): run_id for run_id, args in tasks}
        for future in as_completed(futures):
            run_id = futures[future]
            try:
                yield run_id, future.result()
            except Exception as error:  # the worker was lost, or the task could not be sent
                yield run_id, {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
