"""Run the `llmproxy` command line, or a script, under cProfile and write the stats when it exits.

    python scripts/bench/profiled.py OUT.prof llmproxy record --cassette c.json --port P
    python scripts/bench/profiled.py OUT.prof scripts/bench/core_proxy.py --port P

Since Python 3.12 cProfile sees every thread, so the proxy's own thread is profiled too; it counts process CPU
time, not wall time, so the threads' waiting does not drown the work. Stop the process
with SIGTERM (it then exits normally and the stats are written); read them with `python -m pstats OUT.prof`.
"""

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, target, *args = sys.argv[1:]
    sys.argv = [target, *args]
    profile = cProfile.Profile(time.process_time)  # CPU time: a thread waiting in epoll costs nothing
    profile.enable()
    try:
        if target == "llmproxy":
            from llmproxy.cli import main as cli

            cli()
        else:
            runpy.run_path(target, run_name="__main__")
    finally:
        profile.disable()
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
