"""torch.multiprocessing.spawn / start_processes: run fn(i, *args) in nprocs processes; the first failure
stops the others and is raised in the parent with the child's traceback (ProcessRaisedException) or its
exit code / signal (ProcessExitedException)."""
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException", "ENV_VAR_PARALLEL_START"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
log = logging.getLogger(__name__)


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process failed by raising an exception."""


class ProcessExitedException(ProcessException):
    """A process exited with a nonzero code or was killed by a signal."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _set_pdeathsig():
    # A child dies with its parent (SIGINT, as torch's): Linux's prctl(PR_SET_PDEATHSIG).
    if sys.platform.startswith("linux"):
        try:
            import ctypes  # noqa: PLC0415 (only in the child, only on Linux)
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    _set_pdeathsig()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped us
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes; True once all exited cleanly, False on timeout. The first one to fail
        stops the rest (SIGTERM, then SIGKILL after a grace period) and its failure is raised."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            proc = self.processes[index]
            proc.join()
            if proc.exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL", p.pid)
                p.kill()
            p.join()
        proc = self.processes[failed]
        if not os.access(self.error_files[failed], os.R_OK):
            code = proc.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {failed:d} terminated with signal {name}", error_index=failed,
                                             error_pid=proc.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(f"process {failed:d} terminated with exit code {code:d}", error_index=failed,
                                         error_pid=proc.pid, exit_code=code)
        with open(self.error_files[failed], "rb") as fh:
            trace = pickle.load(fh)
        os.unlink(self.error_files[failed])
        raise ProcessRaisedException(f"\n\n-- Process {failed:d} terminated with the following error:\n" + trace,
                                     failed, proc.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        # A fresh path per process: a file there afterwards means that process raised.
        fd, name = tempfile.mkstemp(prefix="ampgrad-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(name)
        p = ctx.Process(target=_wrap, args=(fn, i, args, name), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(name)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for i in range(nprocs), each in a new ('spawn') process; see ProcessContext.join."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
