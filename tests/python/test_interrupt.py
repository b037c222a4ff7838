"""Ctrl-C during a JIT compile inside Python: KeyboardInterrupt, and the C++
compiler (with its children) ends too (docs/security.md, "Processes")."""

import os
import signal
import subprocess
import sys
import textwrap
import time


def _running(pid):
    """Whether pid is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _wait_for(condition, seconds):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_ctrl_c_during_a_compile_ends_the_compiler(tmp_path):
    child_pid = tmp_path / "child.pid"
    cxx = tmp_path / "slow-c++"
    cxx.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ "$1" = "--version" ]; then echo slow; exit 0; fi
        sleep 300 &
        echo $! > '{child_pid}'
        wait
        """))
    cxx.chmod(0o755)
    script = textwrap.dedent(f"""\
        import numpy as np
        import tenet
        f = tenet.compile("def twice(float(N) x) -> (y) {{ y(i) = 2 * x(i) }}",
                          cache_dir={str(tmp_path / "cache")!r}, cxx={str(cxx)!r})
        try:
            f(np.ones(4, np.float32))  # compiles for float32
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        """)
    python = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: child_pid.exists() and child_pid.read_text().strip(), 60)
        compiler_child = int(child_pid.read_text())
        python.send_signal(signal.SIGINT)
        out, err = python.communicate(timeout=30)
        assert "KeyboardInterrupt" in out, err
        assert _wait_for(lambda: not _running(compiler_child), 10), \
            "the compiler's child outlived the interrupted compile"
    finally:
        python.kill()
        if child_pid.exists() and child_pid.read_text().strip():
            try:
                os.kill(int(child_pid.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
