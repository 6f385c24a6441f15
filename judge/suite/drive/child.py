"""One step of a command agent as a child process: its messages in, its answer out, nothing left behind.

The agent runs in a session (and so a process group) of its own. Its pipes are served by one
loop over a selector (stdin written, stdout and stderr read as they come), never by a blocking
read: a process the agent leaves behind that still holds its stdout or stderr (a `setsid` child
took a session of its own, out of reach of the group's kill) cannot stall the step. When the agent
exits but its output stays open, or the step's time runs out, the agent's group is killed and so
is every process still holding one of its pipes: found by the pipes' inodes in /proc (Linux; a
process of our own session is never touched), each killed with its own process group.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field

ERR_TAIL = 65536
"""The last bytes of stderr kept (its last line names a crash)."""
GRACE_S = 0.2
"""How long the agent's output may stay open after it exited before whatever holds it is killed."""
POLL_S = 0.05
"""How often the loop looks whether the agent exited while its pipes are quiet."""


@dataclass
class Exchange:
    """What one step gave: its stdout (None: more than the cap), the tail of its stderr, whether it
    ran out of time, and the processes it left behind holding its output (`pid command`, killed)."""

    out: bytes | None
    err: bytes
    timed_out: bool = False
    left_behind: list[str] = field(default_factory=list)


def exchange(proc: subprocess.Popen[bytes], data: bytes, timeout: float, cap: int) -> Exchange:
    """Give `proc` `data` on stdin, read its stdout (at most `cap` bytes) and stderr until both close,
    within `timeout` seconds; then kill its process group and anything holding its pipes, and reap it."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # all piped
    pipes = [proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()]
    inodes = {os.fstat(fd).st_ino for fd in pipes}
    out, err = bytearray(), bytearray()
    too_much = timed_out = still_open = False
    try:
        still_open, too_much = _serve(proc, pipes, data, time.monotonic() + timeout, cap, out, err)
        timed_out = proc.poll() is None and not too_much
    finally:  # (also on Ctrl-C)
        kill_group(proc)
        left = kill_holders(inodes, proc.pid) if still_open or timed_out or proc.returncode is None else []
        reap(proc)
    return Exchange(None if too_much else bytes(out), bytes(err[-ERR_TAIL:]), timed_out, left)


def _serve(proc: subprocess.Popen[bytes], pipes: list[int], data: bytes, end: float, cap: int, out: bytearray,
           err: bytearray) -> tuple[bool, bool]:
    """The selector loop of `exchange`: (a pipe is still open, stdout passed the cap). It ends when
    both outputs close and the agent exited, at `end`, or GRACE_S after the agent exited."""
    assert proc.stdin is not None
    too_much = False
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        if data:
            os.set_blocking(pipes[0], False)
            selector.register(pipes[0], selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        selector.register(pipes[1], selectors.EVENT_READ, out)
        selector.register(pipes[2], selectors.EVENT_READ, err)
        sent = 0
        while selector.get_map() and not too_much:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if now >= end or (exited_at is not None and now - exited_at > GRACE_S):
                break
            for key, _ in selector.select(min(end - now, POLL_S)):
                if key.fd == pipes[0]:
                    try:
                        sent += os.write(key.fd, data[sent:sent + 65536])
                    except BlockingIOError:
                        continue
                    except OSError:  # the agent closed its stdin (or exited): its exit code says why
                        sent = len(data)
                    if sent >= len(data):
                        selector.unregister(key.fd)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                into = key.data
                into += chunk
                if into is out and len(out) > cap:
                    too_much = True
                elif into is err and len(err) > 2 * ERR_TAIL:
                    del err[:-ERR_TAIL]
        still_open = bool(selector.get_map())
    if not still_open and proc.poll() is None:  # its output closed: it may still be on its way out
        try:
            proc.wait(timeout=max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    return still_open, too_much


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the agent's process group: it and anything it started that kept its group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Wait for the killed agent and close our ends of its pipes."""
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
        pass
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


def kill_holders(inodes: set[int], agent_group: int) -> list[str]:
    """Kill every process of another session holding one of the pipes `inodes` (and its process
    group); `pid command` of each. The agent's own group (`agent_group`, killed by kill_group just
    before) is not named: SIGKILL is delivered asynchronously, so the agent may still hold its pipes
    while /proc is read, and it was not left behind. Nothing where there is no /proc."""
    wanted = {f"pipe:[{inode}]" for inode in inodes}
    ours = os.getsid(0)
    found: list[str] = []
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return found
    for name in entries:
        pid = int(name)
        if pid == os.getpid() or not _holds(pid, wanted):
            continue
        try:
            if os.getsid(pid) == ours:
                continue  # a process of this session (ours) is never the agent's
            group = os.getpgid(pid)
            if group == agent_group:
                continue  # the agent itself (or what kept its group), dying of kill_group's SIGKILL
            found.append(f"{pid} `{_command(pid)}`")
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    return found


def _holds(pid: int, wanted: set[str]) -> bool:
    try:
        with os.scandir(f"/proc/{pid}/fd") as fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) in wanted:
                        return True
                except OSError:
                    continue
    except OSError:
        return False
    return False


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read(400).split(b"\0")
    except OSError:
        return "?"
    return " ".join(w.decode("utf-8", "replace") for w in words if w)[:120] or "?"
