"""``nandlab serve``: a simulated drive over NBD for real clients (fio, qemu, nbdcopy, nbd-client);
its results, as ``nandlab run``'s, when it stops (Ctrl-C, SIGTERM, or ``--once``)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from nandlab._core import SnapshotError
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, show
from nandlab.cli.errors import sigterm_stops_run
from nandlab.procedures import serve as serving
from nandlab.terminal import printable


@click.command("serve", short_help="Serve a simulated drive over NBD to real programs (fio, qemu, nbdcopy).")
@click.argument("device", metavar="[CONFIG|PRESET]", required=False)
@options.capacity("16GiB")
@click.option("--socket", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Listen on this unix socket (clients: nbd+unix:///?socket=PATH).")
@click.option("--port", type=click.IntRange(0, 65535), metavar="N",
              help="Listen on this TCP port (0: any free one; clients: nbd://HOST:N).")
@click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDR",
              help="The address a TCP port binds to (loopback unless named).")
@click.option("--timing", type=click.Choice(serving.TIMINGS), default="realtime", show_default=True,
              help="realtime: each reply waits for its simulated completion on the wall clock (clients measure "
                   "the simulated drive); fast: replies as soon as the command is simulated.")
@click.option("--client-overhead", "overhead", default="0", show_default=True, metavar="auto|TIME",
              help="Realtime: send each reply this much (e.g. 40us) before its simulated completion, so that the "
                   "client's own wake-up and submission do not count as the drive's; auto learns it from the "
                   "clients' turnarounds.")
@click.option("--power-cut-at", "cuts", metavar="T1,T2,...",
              help="Cut the power at these times from the start of serving (wall clock in realtime timing, "
                   "simulated in fast), e.g. 5s,12.5s: unsafe data is lost as the drive's physics says, every "
                   "connection drops, the drive recovers and clients may reconnect.")
@click.option("--control", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="A unix socket taking a line \"cut\" (a power cut now) or \"stop\", e.g. "
                   "echo cut | nc -U PATH.")
@click.option("--snapshot", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Keep the served drive in this file: its whole simulated state and the data clients wrote are "
                   "written there when serving ends, and a later serve --snapshot PATH (no CONFIG needed) goes on "
                   "with the same drive and data. A file that is not a served drive is never overwritten.")
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
              help="Hold the data clients write in this file (created sparse, the drive's size) instead of memory, "
                   "so that a drive holds more data than the machine has memory. With --snapshot the drive keeps "
                   "the file by reference: serve the snapshot again and the same file is used.")
@click.option("--max-connections", type=click.IntRange(1, 65536), default=64, show_default=True, metavar="N",
              help="Connections open at once, those still in their handshake included (a client has 10 s for "
                   "each step of its handshake); more are closed at once.")
@click.option("--idle-timeout", "idle", default="none", show_default=True, metavar="TIME|none",
              help="Close a connection with nothing in flight that sends no command this long, e.g. 10min.")
@click.option("--once", is_flag=True, help="Stop once a client has come and none has been connected for a second since.")
@click.option("--seed", type=options.SEED, metavar="N", help="Override the config's seed.")
@options.out("Write the run's results (summary.json, timeseries, report.html) and connections.csv to DIR.")
@options.AS_JSON
@options.QUIET
def serve_command(device: str, capacity: str | None, socket: Path | None, port: int | None, host: str,
                  timing: str, overhead: str, cuts: str | None, control: Path | None, snapshot: Path | None,
                  data: Path | None, max_connections: int, idle: str, once: bool,
                  seed: int | None, out: Path | None, as_json: bool, quiet: bool) -> None:
    """Serve the drive of CONFIG (its phases run first: a fill, an ageing) or of a PRESET over NBD,
    until Ctrl-C or SIGTERM (or, with --once, the clients' disconnect); then print and write its
    results as nandlab run does, with a table of the client connections. With --snapshot, the drive
    and its data outlive the server: serve the same file again later.

    \b
    nandlab serve snia-mlc --capacity 1GiB --socket /tmp/nandlab.sock
    fio --ioengine=nbd --uri='nbd+unix:///?socket=/tmp/nandlab.sock' --name=r --rw=randread --bs=4k
    qemu-img convert -n -O raw disk.img 'nbd+unix:///?socket=/tmp/nandlab.sock'
    """
    listen = serving.listen_address(socket, port, host)
    stderr = Console(stderr=True, quiet=quiet)

    what = device if device is not None or snapshot is None else f"the drive in {snapshot}"

    def ready(uri: str) -> None:
        stderr.print(f"serving {printable(str(what))} at {printable(uri)} ({timing} timing); Ctrl-C stops",
                     highlight=False, soft_wrap=True)

    with LazyProgress(stderr) as progress, sigterm_stops_run(True):
        result = serving.serve(device, listen, timing=timing, once=once, capacity=capacity, seed=seed,
                               ready=ready, progress=progress, client_overhead_us=serving.client_overhead(overhead),
                               power_cut_at=serving.seconds_list(cuts) if cuts is not None else (), control=control,
                               snapshot=snapshot, data=data, max_connections=max_connections,
                               idle_timeout_s=serving.idle_timeout(idle))
    show(result, as_json, out, stderr)
    if result.served.get("snapshot_error"):
        kept = result.served.get("data_file")
        raise SnapshotError(result.served["snapshot_error"] + (
            f" (the drive's state is lost; the data clients wrote is in {kept}, which a new drive cannot take "
            "over: move it away to serve a drive there again)" if kept else ""))
